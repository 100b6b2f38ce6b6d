import { randomBytes, randomUUID } from 'node:crypto';
import { createDataSource } from '@meld/db';
import { testEnv } from '@meld/testing';
import type { DataSource } from 'typeorm';
import { WebhookDeliveries } from '../src/webhooks/webhook-deliveries.repository';
import { seedSmsTenancy } from './sms-tenancy';

/**
 * The deliveries accepted since the last claim are recorded by the next claim's statement
 * (ADR 0318): delivered with their status code and attempt, their lease ended; a delivery behind
 * one of them in its message's line is not claimed by that statement (its snapshot still has the
 * one before pending), and is by the next; one no claim took along is recorded at shutdown.
 */
describe('webhook completions recorded with the next claim (real Postgres)', () => {
  let ds: DataSource;
  let t: Awaited<ReturnType<typeof seedSmsTenancy>>;
  let deliveries: WebhookDeliveries;

  beforeAll(async () => {
    ds = await createDataSource({ url: testEnv().postgresUrl, applicationName: 'webhook-completions-spec' }).initialize();
    t = await seedSmsTenancy(ds);
    await ds.query(`INSERT INTO webhooks (organization_id, kind, url, secret) VALUES ($1, 'sms-status', 'http://127.0.0.1:9/sms', $2)`, [t.organization.id, `whsec_${randomBytes(24).toString('base64')}`]);
    deliveries = new WebhookDeliveries(ds);
  });
  afterAll(async () => {
    await deliveries?.onApplicationShutdown();
    await ds?.query(`DELETE FROM organizations WHERE id = $1`, [t?.organization.id]);
    await ds?.destroy();
  });

  /** A message with two reports in line: the first claimed (leased), the second waiting behind it. */
  const message = async (): Promise<{ first: string; second: string }> => {
    const smsId = randomUUID();
    await ds.query(
      `INSERT INTO sms_messages (id, project_id, organization_id, sender_id, destination, country, text, encoding, messages_count, price_per_sms)
       VALUES ($1, $2, $3, $4, '+447400000000', 'GB', 'x', 'GSM-7', 1, 0.04)`,
      [smsId, t.project.id, t.organization.id, t.sender.id],
    );
    const rows: Array<{ id: string }> = await ds.query(
      `INSERT INTO webhook_deliveries (organization_id, project_id, sms_id, body, next_attempt_at, locked_until)
       SELECT $1, $2, $3, '{}', now() - interval '1 second', CASE WHEN k = 1 THEN now() + interval '1 minute' END FROM generate_series(1, 2) k ORDER BY k
       RETURNING id`,
      [t.organization.id, t.project.id, smsId],
    );
    return { first: rows[0]!.id, second: rows[1]!.id };
  };
  const row = async (id: string) =>
    (await ds.query(`SELECT status, attempts, last_status_code AS code, locked_until IS NULL AS unleased, delivered_at IS NOT NULL AS "deliveredAt" FROM webhook_deliveries WHERE id = $1`, [id]))[0];
  /** Claims (up to many, so rows other tests left may come too) and answers which of `ids` it leased. */
  const claimedOf = async (ids: string[], completions: Array<{ id: string; statusCode: number }> = []) => {
    const claimed = new Set((await deliveries.claimDue(500, 60_000, 86_400_000, completions)).map((c) => c.id));
    return ids.filter((id) => claimed.has(id));
  };

  it('records the completions, and the one behind each is claimed from the next claim on', async () => {
    const a = await message();
    const b = await message();
    expect(await claimedOf([a.first, a.second, b.first, b.second], [{ id: a.first, statusCode: 204 }, { id: b.first, statusCode: 200 }])).toEqual([]);
    expect(await row(a.first)).toEqual({ status: 'delivered', attempts: 1, code: 204, unleased: true, deliveredAt: true });
    expect(await row(b.first)).toEqual({ status: 'delivered', attempts: 1, code: 200, unleased: true, deliveredAt: true });
    expect(await claimedOf([a.first, a.second, b.first, b.second])).toEqual([a.second, b.second]);
  });

  it('never claims a delivery it is recording, even one whose lease has passed', async () => {
    const a = await message();
    await ds.query(`UPDATE webhook_deliveries SET locked_until = now() - interval '1 second' WHERE id = $1`, [a.first]);
    expect(await claimedOf([a.first, a.second], [{ id: a.first, statusCode: 204 }])).toEqual([]);
    expect((await row(a.first)).status).toBe('delivered');
  });

  it('records on their own those no claim took along', async () => {
    const a = await message();
    await deliveries.delivered([{ id: a.first, statusCode: 201 }]);
    expect(await row(a.first)).toEqual({ status: 'delivered', attempts: 1, code: 201, unleased: true, deliveredAt: true });
  });
});
