import { randomBytes, randomUUID } from 'node:crypto';
import { type Json, principalSigner, seedTenancy } from '@meld/fixtures';
import { startTracing } from '@meld/platform';
import { waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { startIngest } from '../../apps/ingest/test/app.fixture';
import { awaitPositioned, startProbes } from '../../apps/probes/test/app.fixture';

// One event write followed across Kafka (ADR 0187): ingest and the probes sinks in-process,
// spans in memory. The gateway's part is played by the test: it sends `traceparent` and
// `x-request-id` as the gateway's forward does.
describe('a write through ingest is one trace, from the HTTP request to the ClickHouse insert', () => {
  const exporter = new InMemorySpanExporter();
  let stopTracing: () => Promise<void>;
  let ingest: INestApplication;
  let probes: INestApplication;
  /** Posts events as the gateway forwards them: a signed principal, its request id, the gateway's traceparent. */
  let post: (body: unknown, traceparent: string) => Promise<{ status: number; requestId: string }>;
  let logged: jest.SpyInstance;

  beforeAll(async () => {
    stopTracing = startTracing({ service: 'meld-test', exporter });
    logged = jest.spyOn(Logger.prototype, 'log');
    const started = await startIngest();
    ingest = started.app;
    probes = (await startProbes()).app;
    const tenancy = await seedTenancy(started.db);
    const url = `${started.base}/v1/project/${tenancy.project.uid}/datasource/${tenancy.dataSource.id}/stream/events`;
    const sign = principalSigner(tenancy, { kind: 'datasource', scopes: ['PROJECT_INGEST_WRITE'], dataSourceId: tenancy.dataSource.id }, 'ingest');
    post = async (body, traceparent) => {
      const signed = sign('POST', url);
      const res = await fetch(url, { method: 'POST', headers: { ...signed, traceparent, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, requestId: signed['x-request-id'] };
    };
    // Events of a contact ingest does not know are acknowledged but not produced.
    const contacts = url.replace(/events$/, 'contacts');
    const created = await fetch(contacts, { method: 'POST', headers: { ...sign('POST', contacts), 'content-type': 'application/json' }, body: JSON.stringify([{ _user_id: 'u-trace' }]) });
    expect(created.status).toBe(202);
  }, 120000);
  afterAll(async () => {
    logged?.mockRestore();
    await probes?.close();
    await ingest?.close();
    await stopTracing?.();
  });

  const event = () => [{ _user_id: 'u-trace', _event_id: `e-${randomUUID()}`, _event_type: 'purchase', _event_parameters: { 'product-id': 'sku-1', amount: 12.5 } }];
  const spansOf = (traceId: string): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
  const sinkSpan = (traceId: string) => spansOf(traceId).find((s) => s.name === 'meld.events.v1 write');
  /** A W3C traceparent as the gateway would send it: a fresh trace, its own (gateway) span. */
  const gatewayContext = () => ({ traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex') });

  it('ingest HTTP span → Kafka header → the events sink span share one trace; the sink logs the request id', async () => {
    await awaitPositioned(
      'events sink',
      async () => {
        const canary = gatewayContext();
        await post(event(), `00-${canary.traceId}-${canary.spanId}-01`);
      },
      async () => exporter.getFinishedSpans().some((s) => s.name === 'meld.events.v1 write'),
    );

    const gateway = gatewayContext();
    const { status, requestId } = await post(event(), `00-${gateway.traceId}-${gateway.spanId}-01`);
    expect(status).toBe(202);
    const written = await waitFor('the sink span of the write', async () => sinkSpan(gateway.traceId), { timeoutMs: 30000, intervalMs: 100 });

    const http = spansOf(gateway.traceId).find((s) => s.kind === SpanKind.SERVER);
    expect(http).toMatchObject({ name: 'POST /v1/project/:project/datasource/:datasource/stream/events', attributes: expect.objectContaining({ 'meld.request_id': requestId, 'http.response.status_code': 202 }) });
    expect(http!.parentSpanContext?.spanId).toBe(gateway.spanId);
    // The consumer's span is a child of the request's span: the context crossed Kafka in the headers.
    expect(written.kind).toBe(SpanKind.CONSUMER);
    expect(written.parentSpanContext?.spanId).toBe(http!.spanContext().spanId);

    const lines = logged.mock.calls.map((args: Json[]) => String(args[0]));
    expect(lines.filter((l) => l.includes('sink rows written') && l.includes(requestId))).toHaveLength(1);
  }, 90000);
});
