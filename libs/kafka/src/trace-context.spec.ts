import { REQUEST_ID_HEADER, activeRequestId, withRequestId } from '@meld/contracts';
import { context, propagation, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { messageContext, requestIdsOf, traceHeaders, tracingOn } from './trace-context';

// The context a Kafka message carries (ADR 0187), without a broker.
describe('trace headers of Kafka messages', () => {
  const span = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED };
  afterEach(() => {
    propagation.disable();
    context.disable();
  });

  it('outside any request or message: no headers, tracing off', () => {
    expect(traceHeaders()).toBeUndefined();
    expect(tracingOn()).toBe(false);
  });

  it('tracing off, under a request: the request id only', () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const ctx = withRequestId(trace.setSpanContext(ROOT_CONTEXT, span), 'req-1');
    expect(context.with(ctx, traceHeaders)).toEqual({ [REQUEST_ID_HEADER]: 'req-1' });
  });

  it('tracing on: traceparent too, and a consumer gets both back from the headers (Buffers, as kafkajs gives them)', () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    expect(tracingOn()).toBe(true);
    const headers = context.with(withRequestId(trace.setSpanContext(ROOT_CONTEXT, span), 'req-2'), traceHeaders)!;
    expect(headers).toEqual({ traceparent: `00-${span.traceId}-${span.spanId}-01`, [REQUEST_ID_HEADER]: 'req-2' });
    const received = messageContext(Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Buffer.from(v)])));
    expect(trace.getSpanContext(received)).toMatchObject({ traceId: span.traceId, spanId: span.spanId, isRemote: true });
    expect(activeRequestId(received)).toBe('req-2');
  });

  it('a write names each request once, at most 20', () => {
    const headers = ['a', 'b', 'a', undefined, ...Array.from({ length: 30 }, (_, i) => `r${i}`)].map((id) => (id ? { [REQUEST_ID_HEADER]: Buffer.from(id) } : {}));
    const ids = requestIdsOf(headers);
    expect(ids.slice(0, 3)).toEqual(['a', 'b', 'r0']);
    expect(ids).toHaveLength(20);
  });
});
