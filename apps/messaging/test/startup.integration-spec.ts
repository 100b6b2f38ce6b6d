import { randomBytes } from 'node:crypto';
import { Topics } from '@meld/contracts';
import { collectTopic } from '@meld/fixtures';
import { waitFor } from '@meld/testing';
import { Logger } from '@nestjs/common';
import { startWithWebhook } from './webhook-fixture';

/**
 * Messaging's delivery side starts before Postgres is connected (DbModule connects in the
 * background so that liveness answers meanwhile): its webhook pump waits for the connection
 * (ADR 0283) instead of running a pass that fails with "the DataSource has no pg pool", and the
 * first rows written after the start leave: the status changes' outbox rows to Kafka, the
 * webhook deliveries to the receiver.
 */
describe('messaging start-up', () => {
  const warned: string[] = [];
  let fx: Awaited<ReturnType<typeof startWithWebhook>> | undefined;

  beforeAll(() => {
    // Every Logger of the app goes through Logger.prototype, whatever the level the test runs at.
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void warned.push(String(message)));
  });
  afterAll(async () => {
    await fx?.close();
    jest.restoreAllMocks();
  });

  it('relays the first status changes and sends the first webhook deliveries after the start, and no pump pass runs before Postgres is connected', async () => {
    fx = await startWithWebhook(`whsec_${randomBytes(24).toString('base64')}`);
    const smsId = await fx.send('+447400123423');
    const statuses = await collectTopic(Topics.smsStatus, (v) => v.smsId === smsId);
    try {
      const reports = await waitFor(`the reports about ${smsId}`, async () => (fx!.receiver.about(smsId).length >= 2 ? fx!.receiver.about(smsId) : undefined), { timeoutMs: 20_000 });
      // Every change goes to the topic; the webhook reports those after `enqueued` (ADR 0351).
      expect(reports.map((r) => r.json.status)).toEqual(['sent', 'delivered']);
      expect((await statuses.waitFor(3)).map((m) => m.value.status)).toEqual(['enqueued', 'sent', 'delivered']);
    } finally {
      await statuses.stop();
    }
    expect(warned.filter((w) => /pg pool|pump/.test(w))).toEqual([]);
  });
});
