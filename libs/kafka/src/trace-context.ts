import { REQUEST_ID_HEADER, activeRequestId, withRequestId } from '@meld/contracts';
import { context, propagation, ROOT_CONTEXT, SpanKind, trace, type Attributes, type Context, type Link, type Span, type TextMapGetter } from '@opentelemetry/api';
import type { IHeaders } from 'kafkajs';
import { headerString } from './headers';

const tracer = trace.getTracer('meld-kafka');

const headerGetter: TextMapGetter<IHeaders> = {
  get: (carrier, key) => headerString(carrier, key),
  keys: (carrier) => Object.keys(carrier),
};

/**
 * Headers carrying the active context into Kafka (ADR 0187): W3C `traceparent` when tracing is
 * on, and the request id the work was caused by. Undefined outside any request or message, so
 * the producer's plain path stays as it was.
 */
export function traceHeaders(): Record<string, string> | undefined {
  const ctx = context.active();
  if (ctx === ROOT_CONTEXT) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  const requestId = activeRequestId(ctx);
  if (requestId !== undefined) carrier[REQUEST_ID_HEADER] = requestId;
  return carrier;
}

/** True when a propagator is registered (tracing on): only then do consumers start spans. */
export function tracingOn(): boolean {
  return propagation.fields().length > 0;
}

/** The context a message was produced in: its trace parent and request id. */
export function messageContext(headers: IHeaders | undefined): Context {
  const parent = headers ? propagation.extract(ROOT_CONTEXT, headers, headerGetter) : ROOT_CONTEXT;
  const requestId = headerString(headers, REQUEST_ID_HEADER);
  return requestId === undefined ? parent : withRequestId(parent, requestId);
}

/**
 * A consumer span named `name`, child of the context `headers` carry (a Kafka message's, a
 * queued job's); `work` runs under it, with the request id the headers name.
 */
export function inConsumerSpan<R>(name: string, attributes: Attributes, headers: IHeaders | undefined, work: () => R): R {
  const parent = messageContext(headers);
  const span = tracer.startSpan(name, { kind: SpanKind.CONSUMER, attributes }, parent);
  let result: R;
  try {
    result = context.with(trace.setSpan(parent, span), work);
  } catch (err) {
    span.end();
    throw err;
  }
  if (result instanceof Promise) void result.finally(() => span.end()).catch(() => undefined);
  else span.end();
  return result;
}

/** The consumer span of one Kafka message, child of its producer's context. */
export function inMessageSpan<R>(topic: string, group: string, headers: IHeaders | undefined, work: () => R): R {
  return inConsumerSpan(`${topic} process`, { 'messaging.system': 'kafka', 'messaging.destination.name': topic, 'messaging.consumer.group.name': group }, headers, work);
}

/**
 * A consumer span for a batch written at once (a sink's insert): child of the first message's
 * context, linked to the others' (one write, several causes).
 */
export function batchSpan(topic: string, group: string, headers: ReadonlyArray<IHeaders | undefined>): Span {
  const contexts = headers.map((h) => trace.getSpanContext(messageContext(h))).filter((c) => c !== undefined);
  const parent = contexts.length > 0 ? trace.setSpanContext(ROOT_CONTEXT, contexts[0]) : ROOT_CONTEXT;
  const links: Link[] = contexts.slice(1).map((c) => ({ context: c }));
  return tracer.startSpan(`${topic} write`, { kind: SpanKind.CONSUMER, links, attributes: { 'messaging.system': 'kafka', 'messaging.destination.name': topic, 'messaging.consumer.group.name': group, 'messaging.batch.message_count': headers.length } }, parent);
}

/** Most request ids one log line names: a large write still gives a readable line. */
const MAX_LOGGED_REQUEST_IDS = 20;

/** The distinct request ids of some messages, in order, at most MAX_LOGGED_REQUEST_IDS. */
export function requestIdsOf(headers: ReadonlyArray<IHeaders | undefined>): string[] {
  const seen = new Set<string>();
  for (const h of headers) {
    const id = headerString(h, REQUEST_ID_HEADER);
    if (id !== undefined) seen.add(id);
    if (seen.size === MAX_LOGGED_REQUEST_IDS) break;
  }
  return [...seen];
}
