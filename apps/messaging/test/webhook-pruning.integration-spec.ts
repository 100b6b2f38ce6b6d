import { randomBytes } from 'node:crypto';
import { waitFor } from '@meld/testing';
import { WebhookDispatcher } from '../src/webhooks/webhook-dispatcher';
import { startWithWebhook } from './webhook-fixture';

describe('delivered webhook deliveries are pruned after their retention (real Postgres, Redis, Kafka, SMSC simulator)', () => {
  let fx: Awaited<ReturnType<typeof startWithWebhook>>;

  beforeAll(async () => {
    fx = await startWithWebhook(`whsec_${randomBytes(24).toString('base64')}`);
  });
  afterAll(() => fx?.close());

  const statuses = (smsId: string) => fx.db.query(`SELECT status FROM webhook_deliveries WHERE sms_id = $1 ORDER BY seq`, [smsId]);

  it('deletes delivered rows older than the retention (7 days by default), keeps recent ones and failed ones', async () => {
    // Deliveries reach the table when their first attempt fails (ADR 0323): the receiver refuses them, then takes the retries.
    // Two per message: `sent` and `delivered` (no report for `enqueued`, ADR 0351).
    fx.receiver.answer = 500;
    const [old, recent] = [await fx.send('+447400123470'), await fx.send('+447400123471')];
    for (const smsId of [old, recent]) {
      await waitFor(`owed reports of ${smsId}`, async () => ((await statuses(smsId)).length === 2 ? true : undefined), { timeoutMs: 15_000 });
    }
    fx.receiver.answer = 204;
    for (const smsId of [old, recent]) {
      await waitFor(`delivered reports of ${smsId}`, async () => {
        const rows = await statuses(smsId);
        return rows.length === 2 && rows.every((r: { status: string }) => r.status === 'delivered') ? rows : undefined;
      }, { timeoutMs: 15_000 });
    }
    // The old message's second delivery delivered 8 days ago; its first failed for good 8 days ago (kept for the operator).
    await fx.db.query(
      `UPDATE webhook_deliveries SET delivered_at = now() - interval '8 days',
              status = CASE WHEN seq = (SELECT min(seq) FROM webhook_deliveries WHERE sms_id = $1) THEN 'failed' ELSE status END
        WHERE sms_id = $1`,
      [old],
    );
    // At least that one: the test database may hold aged rows of an earlier run.
    expect(await fx.app.get(WebhookDispatcher).prune()).toBeGreaterThanOrEqual(1);
    expect(await statuses(old)).toEqual([{ status: 'failed' }]);
    expect(await statuses(recent)).toEqual([{ status: 'delivered' }, { status: 'delivered' }]);
  });
});
