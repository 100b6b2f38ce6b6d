import { randomUUID } from 'node:crypto';
import { DATA_SOURCE } from '@meld/db';
import type { DataSource } from 'typeorm';
import { type AdminGateway, startAdminGateway } from './admin-support/admin-gateway';
import { UNKNOWN_ID, createOrganization, createProject, fieldsOf } from './admin-support/fixtures';

// Deliveries are written by the messaging app (ADR 0155): the test writes the rows as it leaves them.
describe('admin: webhook deliveries (list by status, retry)', () => {
  let gw: AdminGateway;
  let db: DataSource;
  let org: string;
  let projectId: string;

  beforeAll(async () => {
    gw = await startAdminGateway();
    db = gw.app.get(DATA_SOURCE);
    org = await createOrganization(gw);
    projectId = (await createProject(gw, org)).id;
  });
  afterAll(() => gw?.close());

  // `seq` as messaging's sequence would have given it (default: the next one).
  const delivery = async (status: 'pending' | 'delivered' | 'failed', organizationId = org, seq?: number) => {
    const smsId = randomUUID();
    await db.query(
      `INSERT INTO sms_messages (id, project_id, organization_id, sender_id, destination, country, text, encoding, messages_count, price_per_sms, status)
       VALUES ($1, $2, $3, $4, '+447400123413', 'GB', 'hi', 'GSM-7', 1, 0.04, 'undelivered')`,
      [smsId, projectId, organizationId, randomUUID()],
    );
    const body = JSON.stringify({ id: smsId, status: 'undelivered', audienceId: null, messagesCount: 1, at: new Date().toISOString(), error: 'err:013' });
    const [row] = await db.query(
      `INSERT INTO webhook_deliveries (organization_id, project_id, sms_id, body, status, attempts, last_status_code, last_error, seq)
       VALUES ($1, $2, $3, $4, $5, 7, 503, 'answered 503', COALESCE($6, nextval('webhook_deliveries_seq_seq'))) RETURNING id`,
      [organizationId, projectId, smsId, body, status, seq ?? null],
    );
    return { id: row.id as string, smsId };
  };

  it('lists the failed deliveries, newest first, with the payload sent; pages with a cursor', async () => {
    const older = await delivery('failed');
    await delivery('delivered');
    const newer = await delivery('failed');
    const res = await gw.call('GET', `/organizations/${org}/webhook-deliveries?status=failed`);
    expect(res.status).toBe(200);
    expect(res.body.entity.map((d: { id: string }) => d.id)).toEqual([newer.id, older.id]);
    expect(res.body.entity[0]).toEqual({
      id: newer.id, smsId: newer.smsId, projectId, status: 'failed', attempts: 7, lastStatusCode: 503, lastError: 'answered 503',
      nextAttemptAt: null, deliveredAt: null, createdAt: expect.any(String),
      payload: { id: newer.smsId, status: 'undelivered', audienceId: null, messagesCount: 1, at: expect.any(String), error: 'err:013' },
    });
    const page1 = await gw.call('GET', `/organizations/${org}/webhook-deliveries?status=failed&limit=1`);
    expect(page1.body.entity.map((d: { id: string }) => d.id)).toEqual([newer.id]);
    const page2 = await gw.call('GET', `/organizations/${org}/webhook-deliveries?status=failed&limit=1&cursor=${page1.body.metadata.nextCursor}`);
    expect(page2.body.entity.map((d: { id: string }) => d.id)).toEqual([older.id]);
    expect((await gw.call('GET', `/organizations/${org}/webhook-deliveries`)).body.metadata.count).toBe(3);
  });

  // The sequence is shared by every organization, so an organization's deliveries straddle a power of
  // ten sooner or later: sorted as text ('9' > '100' > '10') the list was out of order and a page's
  // cursor skipped the newer rows (the spec failed when the test database's sequence crossed one).
  it('lists newest first and pages through every delivery when their seq straddle a power of ten', async () => {
    const other = await createOrganization(gw);
    const ids: string[] = [];
    for (const seq of [9, 10, 99, 100]) ids.unshift((await delivery('failed', other, seq)).id);
    const all = await gw.call('GET', `/organizations/${other}/webhook-deliveries`);
    expect(all.body.entity.map((d: { id: string }) => d.id)).toEqual(ids);
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await gw.call('GET', `/organizations/${other}/webhook-deliveries?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      paged.push(...page.body.entity.map((d: { id: string }) => d.id));
      cursor = page.body.metadata.nextCursor;
    } while (cursor && paged.length <= ids.length);
    expect(paged).toEqual(ids);
  });

  it('400 names the bad query field; 404 for an unknown organization', async () => {
    const bad = await gw.call('GET', `/organizations/${org}/webhook-deliveries?status=lost&limit=0&cursor=x`);
    expect(bad.status).toBe(400);
    expect(fieldsOf(bad.body).map(([path]) => path)).toEqual(['status', 'limit', 'cursor']);
    expect((await gw.call('GET', `/organizations/${org}/webhook-deliveries?sort=asc`)).status).toBe(400);
    // `seq` is a bigint: a cursor past its maximum is the caller's 400, not Postgres' 22003 (a 500).
    for (const cursor of ['9999999999999999999', '9223372036854775808', '99999999999999999999']) {
      const big = await gw.call('GET', `/organizations/${org}/webhook-deliveries?cursor=${cursor}`);
      expect([cursor, big.status, fieldsOf(big.body).map(([path]) => path)]).toEqual([cursor, 400, ['cursor']]);
    }
    expect((await gw.call('GET', `/organizations/${org}/webhook-deliveries?cursor=9223372036854775807`)).status).toBe(200);
    expect((await gw.call('GET', `/organizations/${UNKNOWN_ID}/webhook-deliveries`)).status).toBe(404);
  });

  it('retries a failed delivery: pending again now, with a fresh retry window; 409 when already pending; 404 for another organization', async () => {
    const failed = await delivery('failed');
    const res = await gw.call('POST', `/organizations/${org}/webhook-deliveries/${failed.id}/retry`);
    expect(res.status).toBe(202);
    expect(res.body.entity).toMatchObject({ id: failed.id, status: 'pending', nextAttemptAt: expect.any(String) });
    const [row] = await db.query(`SELECT status, next_attempt_at <= now() AS due, retry_from > now() - interval '1 minute' AS fresh FROM webhook_deliveries WHERE id = $1`, [failed.id]);
    expect(row).toEqual({ status: 'pending', due: true, fresh: true });
    expect((await gw.call('POST', `/organizations/${org}/webhook-deliveries/${failed.id}/retry`)).status).toBe(409);
    const other = await createOrganization(gw);
    expect((await gw.call('POST', `/organizations/${other}/webhook-deliveries/${failed.id}/retry`)).status).toBe(404);
    expect((await gw.call('POST', `/organizations/${org}/webhook-deliveries/not-a-uuid/retry`)).status).toBe(404);
  });
});
