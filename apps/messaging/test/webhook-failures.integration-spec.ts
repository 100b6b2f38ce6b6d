import { randomBytes } from 'node:crypto';
import type { Json } from '@meld/fixtures';
import { waitFor } from '@meld/testing';
import type { DataSource } from 'typeorm';
import { WebhookPoster } from '../src/webhooks/webhook-poster';
import { TARGET_TTL_MS } from '../src/webhooks/webhook-targets';
import { startWithWebhook } from './webhook-fixture';
import type { WebhookReceiver } from './webhook-receiver';

describe('delivery-report webhooks that fail (real Postgres, Redis, Kafka, SMSC simulator)', () => {
  let fx: Awaited<ReturnType<typeof startWithWebhook>>;
  let db: DataSource;
  let receiver: WebhookReceiver;
  let send: (phone: string) => Promise<string>;

  beforeAll(async () => {
    // No retry window: the first failed attempt is the last, so "failed" is reached at once.
    process.env.MELD_WEBHOOK_RETRY_FOR_MS = '0';
    process.env.MELD_WEBHOOK_TIMEOUT_MS = '500';
    fx = await startWithWebhook(`whsec_${randomBytes(24).toString('base64')}`);
    ({ db, receiver, send } = fx);
  });
  afterAll(async () => {
    delete process.env.MELD_WEBHOOK_RETRY_FOR_MS;
    delete process.env.MELD_WEBHOOK_TIMEOUT_MS;
    await fx?.close();
  });

  const deliveries = (smsId: string) =>
    db.query(`SELECT status, attempts, last_status_code AS "code", last_error AS error FROM webhook_deliveries WHERE sms_id = $1 ORDER BY seq`, [smsId]);
  const settled = (smsId: string, count: number) =>
    waitFor(`${count} settled deliveries of ${smsId}`, async () => {
      const rows = await deliveries(smsId);
      return rows.length === count && rows.every((r: Json) => r.status !== 'pending') ? rows : undefined;
    }, { timeoutMs: 15_000 });

  it('a receiver answering 500 past the retry window: each delivery ends failed, the later ones still go; an operator retry delivers it', async () => {
    receiver.answer = 500;
    // `sent` then `delivered`: two reports (the initial `enqueued` is not one, ADR 0351).
    const smsId = await send('+447400123427');
    expect(await settled(smsId, 2)).toEqual([
      { status: 'failed', attempts: 1, code: 500, error: 'answered 500' },
      { status: 'failed', attempts: 1, code: 500, error: 'answered 500' },
    ]);
    receiver.answer = 204;
    // What POST /admin/v1/organizations/{org}/webhook-deliveries/{id}/retry writes.
    await db.query(`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), retry_from = now(), updated_at = now() WHERE sms_id = $1 AND status = 'failed'`, [smsId]);
    const rows = await settled(smsId, 2);
    expect(rows.map((r: Json) => [r.status, r.attempts, r.code])).toEqual([['delivered', 2, 204], ['delivered', 2, 204]]);
    expect(receiver.about(smsId).map((r) => [r.json.status, r.answered])).toEqual([['sent', 500], ['delivered', 500], ['sent', 204], ['delivered', 204]]);
  });

  it('a receiver that never answers: the attempt ends at the timeout', async () => {
    receiver.answer = 'hang';
    const smsId = await send('+447400123499');
    const rows = await settled(smsId, 1);
    expect(rows[0]).toEqual({ status: 'failed', attempts: 1, code: null, error: 'no answer within 500 ms' });
    receiver.answer = 204;
  });

  it('a webhook without a secret (the column allows it) fails its deliveries visibly instead of leaving them stuck', async () => {
    await db.query(`UPDATE webhooks SET secret = NULL WHERE organization_id = $1`, [fx.t.organization.id]);
    // The outbox's first attempts read a project's webhook at most TARGET_TTL_MS before an attempt (ADR 0323).
    await new Promise((r) => setTimeout(r, TARGET_TTL_MS + 100));
    try {
      const smsId = await send('+447400123499');
      const rows = await settled(smsId, 1);
      expect(rows[0]).toEqual({ status: 'failed', attempts: 1, code: null, error: 'the webhook has no secret: set one with PUT /admin/v1/organizations/{org}/webhooks/sms-status' });
    } finally {
      await db.query(`UPDATE webhooks SET secret = $2 WHERE organization_id = $1`, [fx.t.organization.id, `whsec_${randomBytes(24).toString('base64')}`]);
    }
  });

  it('refuses loopback and private targets unless allowed, by address and by name', async () => {
    const poster = new WebhookPoster({ allowPrivate: false, timeoutMs: 1000 });
    try {
      const before = receiver.received.length;
      for (const url of [receiver.url, receiver.url.replace('127.0.0.1', 'localhost'), 'http://[::1]:9/x', 'http://169.254.169.254/latest/meta-data']) {
        const result = await poster.post(url, '{}', {});
        expect([url, result.ok, result.error]).toEqual([url, false, expect.stringMatching(/is a private or loopback address/)]);
      }
      expect(receiver.received.length).toBe(before);
    } finally {
      await poster.close();
    }
    const allowed = new WebhookPoster({ allowPrivate: true, timeoutMs: 1000 });
    try {
      expect(await allowed.post(receiver.url, '{}', {})).toEqual({ ok: true, statusCode: 204 });
    } finally {
      await allowed.close();
    }
  });
});
