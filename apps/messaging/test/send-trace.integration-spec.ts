import { randomBytes } from 'node:crypto';
import { type Json, principalHeader } from '@meld/fixtures';
import { startTracing } from '@meld/platform';
import { waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { type Smsc, seedContact, seedSmsTenancy, startMessaging } from './app.fixture';

// The SMS send job runs in the trace of the request that queued it (ADR 0187): the context
// crosses Redis in the BullMQ job's data.
describe('a direct SMS send is one trace, from the POST to the SMPP submit job', () => {
  const exporter = new InMemorySpanExporter();
  let stopTracing: () => Promise<void>;
  let app: INestApplication;
  let smsc: Smsc;

  beforeAll(async () => {
    stopTracing = startTracing({ service: 'meld-test', exporter });
    let base: string;
    let db;
    ({ app, base, db, smsc } = await startMessaging());
    const t = await seedSmsTenancy(db);
    await seedContact(db, t.project.id, { _user_id: 'u-trace', _phone_mobile: '+447400123423' });
    send = async (traceparent) => {
      const url = `/v1/project/${t.project.uid}/channel/sms/sms/direct/default/${encodeURIComponent('+447400123423')}`;
      const res = await fetch(`${base}${url}`, {
        method: 'POST',
        headers: { ...principalHeader(t, { scopes: ['PROJECT_DIRECT_WRITE'] }, { app: 'messaging', method: 'POST', url }), 'content-type': 'application/json', traceparent },
        body: JSON.stringify({ text: 'Your code is 4821' }),
      });
      return { status: res.status, body: (await res.json()) as Json };
    };
  });
  afterAll(async () => {
    await app?.close();
    await smsc?.close();
    await stopTracing?.();
  });
  let send: (traceparent: string) => Promise<{ status: number; body: Json }>;

  it('the worker span is a child of the request span', async () => {
    const traceId = randomBytes(16).toString('hex');
    const { status } = await send(`00-${traceId}-${randomBytes(8).toString('hex')}-01`);
    expect(status).toBe(201);
    const spans = () => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    const job = await waitFor('the send job span', async () => spans().find((s) => s.name === 'meld-sms-send process'), { timeoutMs: 10_000 });
    const http = spans().find((s) => s.kind === SpanKind.SERVER)!;
    expect(http.name).toBe('POST /v1/project/:project/channel/sms/sms/direct/:sender/:target');
    expect(job.kind).toBe(SpanKind.CONSUMER);
    expect(job.parentSpanContext?.spanId).toBe(http.spanContext().spanId);
  });
});
