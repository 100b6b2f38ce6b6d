import { randomBytes } from 'node:crypto';
import { REQUEST_ID_HEADER, Topics } from '@meld/contracts';
import { collectTopic, principalSigner, seedTenancy } from '@meld/fixtures';
import { startTracing } from '@meld/platform';
import type { INestApplication } from '@nestjs/common';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { startIngest } from '../../apps/ingest/test/app.fixture';

// A contact write followed through the outbox (ADR 0213): the row keeps the request's context
// and the relay sends it as the Kafka message's headers. The gateway's part is played by the
// test: it sends `traceparent` and `x-request-id` as the gateway's forward does.
describe('a contact write through the outbox carries its trace context to Kafka', () => {
  const exporter = new InMemorySpanExporter();
  let stopTracing: () => Promise<void>;
  let ingest: INestApplication;
  let contacts: Awaited<ReturnType<typeof collectTopic>>;
  let post: (body: unknown, traceparent: string) => Promise<{ status: number; requestId: string }>;

  beforeAll(async () => {
    stopTracing = startTracing({ service: 'meld-test', exporter });
    const started = await startIngest();
    ingest = started.app;
    const tenancy = await seedTenancy(started.db);
    contacts = await collectTopic(Topics.contacts, (v) => v?.projectId === tenancy.project.id, { headers: true });
    const url = `${started.base}/v1/project/${tenancy.project.uid}/datasource/${tenancy.dataSource.id}/stream/contacts`;
    const sign = principalSigner(tenancy, { kind: 'datasource', scopes: ['PROJECT_INGEST_WRITE'], dataSourceId: tenancy.dataSource.id }, 'ingest');
    post = async (body, traceparent) => {
      const signed = sign('POST', url);
      const res = await fetch(url, { method: 'POST', headers: { ...signed, traceparent, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, requestId: signed['x-request-id'] };
    };
  }, 120000);
  afterAll(async () => {
    await contacts?.stop();
    await ingest?.close();
    await stopTracing?.();
  });

  it('the meld.contacts.v1 message names the request id, and its traceparent is the ingest HTTP span', async () => {
    const gateway = { traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex') };
    const { status, requestId } = await post([{ _user_id: 'u-outbox-trace', _first_name: 'Ada' }], `00-${gateway.traceId}-${gateway.spanId}-01`);
    expect(status).toBe(202);
    const [published] = await contacts.waitFor(1, (m) => m.value.userId === 'u-outbox-trace', 30000);

    const http = exporter.getFinishedSpans().find((s) => s.spanContext().traceId === gateway.traceId && s.kind === SpanKind.SERVER);
    expect(http).toBeDefined();
    expect(published.headers).toMatchObject({ traceparent: `00-${gateway.traceId}-${http!.spanContext().spanId}-01`, [REQUEST_ID_HEADER]: requestId });
  }, 90000);
});
