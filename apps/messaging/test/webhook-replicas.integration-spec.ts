import { randomBytes } from 'node:crypto';
import { waitFor } from '@meld/testing';
import { startMessaging } from './app.fixture';
import { startWithWebhook } from './webhook-fixture';

describe('webhook attempts claimed by two processes at once (ADR 0252; real Postgres, Redis, SMSC simulators)', () => {
  let fx: Awaited<ReturnType<typeof startWithWebhook>>;
  let other: Awaited<ReturnType<typeof startMessaging>>;

  beforeAll(async () => {
    fx = await startWithWebhook(`whsec_${randomBytes(24).toString('base64')}`);
    // A second process on the same database: its pump claims from the same table.
    other = await startMessaging();
  });
  afterAll(async () => {
    await other?.app.close();
    await other?.smsc.close();
    await fx?.close();
  });

  it('every report is sent once, and each message\'s reports in order', async () => {
    const ids = await Promise.all(Array.from({ length: 12 }, (_, i) => fx.send(`+4474001236${String(i).padStart(2, '0')}`)));
    await waitFor('every report', async () => (ids.every((id) => fx.receiver.about(id).length >= 2) ? true : undefined), { timeoutMs: 30_000 });
    await new Promise((r) => setTimeout(r, 500));
    for (const id of ids) {
      const reports = fx.receiver.about(id);
      expect(reports.map((r) => r.json.status)).toEqual(['sent', 'delivered']);
      expect(new Set(reports.map((r) => r.headers['webhook-id'])).size).toBe(2);
    }
  });
});
