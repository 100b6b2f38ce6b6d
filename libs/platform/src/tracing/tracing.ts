import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import type { BasicTracerProvider, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';

export interface TracingOptions {
  /** `service.name` of the spans (the app). */
  service: string;
  /** Tests pass an in-memory exporter (spans are exported one by one, at once). */
  exporter?: SpanExporter;
  env?: NodeJS.ProcessEnv;
}

let provider: BasicTracerProvider | undefined;
let contextReady = false;

/**
 * Tracing of one process (ADR 0187). Always: a context manager, so a request's or a message's
 * request id follows its async work into Kafka headers. Only with `OTEL_EXPORTER_OTLP_ENDPOINT`
 * set (or an exporter given): a tracer provider exporting over OTLP/HTTP and the W3C
 * `traceparent` propagator. Without them `@opentelemetry/api` stays its no-op self: spans are
 * non-recording and nothing is injected or exported. Later calls in the same process (a test
 * that started tracing before booting apps in-process) change nothing. Returns what stops the
 * tracing this call started (exporting what is buffered), a no-op for a call that started none.
 */
export function startTracing(options: TracingOptions): () => Promise<void> {
  if (!contextReady) {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    contextReady = true;
  }
  const env = options.env ?? process.env;
  if (provider || (!options.exporter && !env.OTEL_EXPORTER_OTLP_ENDPOINT)) return async () => undefined;
  // The SDK, the OTLP exporter and the W3C propagator load only here, for a process that exports:
  // most processes never do, and loading them costs ~150 ms of CPU per boot and per Jest file (ADR 0355).
  const { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor }: typeof import('@opentelemetry/sdk-trace-base') = require('@opentelemetry/sdk-trace-base');
  const { resourceFromAttributes }: typeof import('@opentelemetry/resources') = require('@opentelemetry/resources');
  const { W3CTraceContextPropagator }: typeof import('@opentelemetry/core') = require('@opentelemetry/core');
  let processor: SpanProcessor;
  if (options.exporter) processor = new SimpleSpanProcessor(options.exporter);
  else {
    // The exporter reads OTEL_EXPORTER_OTLP_ENDPOINT (and its _HEADERS, _TIMEOUT) itself.
    const { OTLPTraceExporter }: typeof import('@opentelemetry/exporter-trace-otlp-http') = require('@opentelemetry/exporter-trace-otlp-http');
    processor = new BatchSpanProcessor(new OTLPTraceExporter());
  }
  provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': options.service }), spanProcessors: [processor] });
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const started = provider;
  return async () => {
    if (provider !== started) return;
    provider = undefined;
    await started.shutdown();
    trace.disable();
    propagation.disable();
  };
}
