import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SmsStatusChange } from '@meld/contracts';
import type { Json } from '@meld/fixtures';
import { waitFor } from '@meld/testing';
import { Webhook } from 'standardwebhooks';
import type { DataSource } from 'typeorm';
import { webhookReport } from '../src/webhooks/webhook-report';
import { startWithWebhook } from './webhook-fixture';
import type { Received, WebhookReceiver } from './webhook-receiver';

/** Meld-Signature checked with node:crypto alone, as a receiver would (system design §4). */
function verifyMeldSignature(received: Received, secret: string): boolean {
  const header = String(received.headers['meld-signature']);
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match) return false;
  const expected = createHmac('sha256', secret).update(`${match[1]}.${received.body}`).digest();
  return timingSafeEqual(expected, Buffer.from(match[2]!, 'hex')) && Math.abs(Date.now() / 1000 - Number(match[1])) < 300;
}

describe('delivery-report webhooks (real Postgres, Redis, Kafka, SMSC simulator, an HTTP receiver)', () => {
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  let fx: Awaited<ReturnType<typeof startWithWebhook>>;
  let db: DataSource;
  let receiver: WebhookReceiver;
  let send: (phone: string) => Promise<string>;

  beforeAll(async () => {
    fx = await startWithWebhook(secret);
    ({ db, receiver, send } = fx);
  });
  afterAll(() => fx?.close());

  const statusesReported = (smsId: string) => receiver.about(smsId).map((r) => r.json.status);
  const reportsOf = (smsId: string, count: number) =>
    waitFor(`${count} reports about ${smsId}`, async () => (receiver.about(smsId).length >= count ? receiver.about(smsId) : undefined), { timeoutMs: 20_000 });

  const historyOf = async (smsId: string) => (await db.query(`SELECT status FROM sms_status_history WHERE sms_id = $1 ORDER BY id`, [smsId])).map((r: Json) => r.status);

  it.each([
    ['+447400123423', ['sent', 'delivered'], undefined],
    ['+447400123413', ['sent', 'undelivered'], expect.any(String)],
    ['+447400123414', ['sent', 'expired'], undefined],
    ['+447400123499', ['failed'], expect.stringContaining('SMSC refused')],
  ])('reports every status change of a message to %s after the initial enqueued, in order, signed both ways', async (phone, statuses, finalError) => {
    const smsId = await send(phone);
    const reports = await reportsOf(smsId, statuses.length);
    // No `enqueued` report (ADR 0351): reports keep their message's order, so one would have come first.
    expect(reports.map((r) => r.json.status)).toEqual(statuses);
    // `enqueued` is still the message's first change on record; only the webhook leaves it out.
    expect(await historyOf(smsId)).toEqual(['enqueued', ...statuses]);
    const [audienceId] = (await db.query(`SELECT audience_id FROM sms_messages WHERE id = $1`, [smsId])).map((r: Json) => r.audience_id);
    const last = reports.at(-1)!;
    expect(last.json).toEqual({ id: smsId, status: statuses.at(-1), audienceId, messagesCount: 1, at: expect.any(String), ...(finalError ? { error: finalError } : {}) });
    // Exactly the payload's fields, in the design's order.
    expect(Object.keys(last.json)).toEqual(['id', 'status', 'audienceId', 'messagesCount', 'at', ...(finalError ? ['error'] : [])]);
    const standard = new Webhook(secret);
    for (const report of reports) {
      expect(verifyMeldSignature(report, secret)).toBe(true);
      expect(standard.verify(report.body, report.headers as Record<string, string>)).toEqual(report.json);
      expect(report.headers['content-type']).toBe('application/json');
    }
    // One event id per status change, named by the message and the status (ADR 0323).
    const ids = reports.map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(reports.map((r) => webhookReport({ schemaVersion: 1, projectId: fx.t.project.id, smsId, ...r.json } as SmsStatusChange).eventId));
    // Delivered at their first attempts: the outbox rows are gone and no delivery row was needed. A pass
    // deletes its rows (and writes what failed) in a commit after its posts, so after the receiver heard them.
    await waitFor('the outbox rows deleted', async () => (await db.query(`SELECT id FROM sms_webhook_outbox WHERE key = $1`, [smsId])).length === 0);
    expect(await db.query(`SELECT id FROM webhook_deliveries WHERE sms_id = $1`, [smsId])).toEqual([]);
  });

  it('a tampered body or another secret does not verify', async () => {
    const smsId = await send('+447400123424');
    const [report] = await reportsOf(smsId, 1);
    const tampered = { ...report!, body: report!.body.replace('"status":"sent"', '"status":"delivered"') };
    expect(tampered.body).not.toBe(report!.body);
    expect(verifyMeldSignature(tampered, secret)).toBe(false);
    expect(() => new Webhook(secret).verify(tampered.body, tampered.headers as Record<string, string>)).toThrow();
    expect(verifyMeldSignature(report!, `${secret}x`)).toBe(false);
  });

  it('receiver down for a while, then back: every status of every message arrives, in order per message', async () => {
    await receiver.stop();
    const phones = ['+447400123425', '+447400123413', '+447400123499', '+447400123426', '+447400123414'];
    const ids = await Promise.all(phones.map((p) => send(p)));
    // The messages reach their final statuses while nobody answers.
    await waitFor('final statuses', async () => {
      const rows = await db.query(`SELECT count(*)::int AS n FROM sms_messages WHERE id = ANY($1) AND status NOT IN ('enqueued', 'sent')`, [ids]);
      return rows[0].n === ids.length || undefined;
    }, { timeoutMs: 15_000 });
    const failedAttempts = await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE sms_id = ANY($1) AND attempts > 0 AND status = 'pending'`, [ids]);
    expect(failedAttempts[0].n).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 3000));
    await receiver.start();
    const expected = (phone: string) =>
      phone.endsWith('99') ? ['failed'] : ['sent', phone.endsWith('13') ? 'undelivered' : phone.endsWith('14') ? 'expired' : 'delivered'];
    for (const [i, id] of ids.entries()) {
      await reportsOf(id, expected(phones[i]!).length);
    }
    // At-least-once: a retry may repeat a report (same webhook-id); the distinct reports are every status, in order.
    for (const [i, id] of ids.entries()) {
      const firsts = receiver.about(id).filter((r, n, all) => all.findIndex((o) => o.headers['webhook-id'] === r.headers['webhook-id']) === n);
      expect(firsts.map((r) => r.json.status)).toEqual(expected(phones[i]!));
    }
    expect(statusesReported(ids[0]!)).toEqual(expected(phones[0]!));
  }, 90_000);

  it('a message refused after enqueue is reported rejected, its only report; the last test: it closes the SMSC', async () => {
    // Nothing reaches the SMSC meanwhile: the send job waits and retries, and finds the opt-out.
    await fx.smsc.close().catch(() => undefined);
    const smsId = await send('+447400123428');
    await db.query(`UPDATE audience_contacts SET attributes = attributes || '{"_consent_sms":"opt-out"}' WHERE id = (SELECT audience_id FROM sms_messages WHERE id = $1)`, [smsId]);
    const [report] = await reportsOf(smsId, 1);
    expect(report!.json).toMatchObject({ id: smsId, status: 'rejected', error: 'opted_out' });
    expect(verifyMeldSignature(report!, secret)).toBe(true);
    await new Promise((r) => setTimeout(r, 500));
    expect(statusesReported(smsId)).toEqual(['rejected']);
    expect(await historyOf(smsId)).toEqual(['enqueued', 'rejected']);
  }, 30_000);
});
