import { randomBytes, randomUUID } from 'node:crypto';
import { createDataSource } from '@meld/db';
import { testEnv } from '@meld/testing';
import type { DataSource } from 'typeorm';
import { settingsPool } from '../src/db/settings-pool';
import { CLAIM_DUE, CLAIM_PLANNER, WebhookDeliveries } from '../src/webhooks/webhook-deliveries.repository';
import { seedSmsTenancy } from './sms-tenancy';

/**
 * The claim's plan, run (EXPLAIN ANALYZE) on a connection opened as the claims' is (ADR 0315), in a
 * transaction rolled back; the claim never runs without those settings.
 */
async function explainClaim(ds: DataSource, values: unknown[]) {
  const pool = settingsPool(ds, CLAIM_PLANNER);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SET LOCAL statement_timeout = '10s'`);
    const { rows: [{ 'QUERY PLAN': [plan] }] } = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${CLAIM_DUE}`, values);
    return plan;
  } finally {
    await client.query('ROLLBACK');
    client.release();
    await pool.end();
  }
}

/** Messages whose first delivery is leased (in flight) and whose second waits behind it. */
const BLOCKED = 1500;

// ADR 0275: the claim's head-of-line test as a NOT EXISTS was planned, from statistics that saw
// few pending rows, as a scan of every pending row for each candidate: a backlog of n blocked
// deliveries (a receiver down for an hour) made each claim cost n², hundreds of thousands of
// buffer reads here. As a probe of each message's first pending `seq`, it grows with n.
describe('claiming webhook deliveries behind a backlog (real Postgres)', () => {
  let ds: DataSource;
  let t: Awaited<ReturnType<typeof seedSmsTenancy>>;
  let free: string;

  beforeAll(async () => {
    ds = await createDataSource({ url: testEnv().postgresUrl, applicationName: 'webhook-claim-backlog-spec' }).initialize();
    t = await seedSmsTenancy(ds);
    await ds.query(`INSERT INTO webhooks (organization_id, kind, url, secret) VALUES ($1, 'sms-status', 'http://127.0.0.1:9/sms', $2)`, [t.organization.id, `whsec_${randomBytes(24).toString('base64')}`]);
    // The statistics before the backlog: as a table whose pending rows come and go looks most of the time.
    await ds.query(`ANALYZE webhook_deliveries`);
    const ids = Array.from({ length: BLOCKED + 1 }, () => randomUUID());
    free = ids[BLOCKED]!;
    await ds.query(
      `INSERT INTO sms_messages (id, project_id, organization_id, sender_id, destination, country, text, encoding, messages_count, price_per_sms)
       SELECT id, $2, $3, $4, '+447400000000', 'GB', 'x', 'GSM-7', 1, 0.04 FROM unnest($1::uuid[]) AS id`,
      [ids, t.project.id, t.organization.id, t.sender.id],
    );
    // Oldest first: each blocked message's leased head and its waiting successor, then the one free message's head.
    await ds.query(
      `INSERT INTO webhook_deliveries (organization_id, project_id, sms_id, body, next_attempt_at, locked_until)
       SELECT $2, $3, ids.id, '{}', now() - interval '1 minute', CASE WHEN k = 1 THEN now() + interval '1 hour' END
         FROM unnest($1::uuid[]) WITH ORDINALITY AS ids(id, n), generate_series(1, 2) AS k ORDER BY ids.n, k`,
      [ids.slice(0, BLOCKED), t.organization.id, t.project.id],
    );
    await ds.query(`INSERT INTO webhook_deliveries (organization_id, project_id, sms_id, body) VALUES ($1, $2, $3, '{}')`, [t.organization.id, t.project.id, free]);
  });

  afterAll(async () => {
    await ds?.query(`DELETE FROM organizations WHERE id = $1`, [t?.organization.id]);
    await ds?.destroy();
  });

  it('reads a bounded number of buffers per pending delivery, and claims only the free head', async () => {
    // The NOT EXISTS form ran here for over ten minutes; this one takes milliseconds.
    const plan = await explainClaim(ds, [10, 60, 86_400]);
    expect(plan.Plan['Shared Hit Blocks'] + plan.Plan['Shared Read Blocks']).toBeLessThan(10 * 2 * BLOCKED);
    // Rows other tests left in the shared database may be claimed too; none of the blocked ones.
    const deliveries = new WebhookDeliveries(ds);
    const claimed = new Set((await deliveries.claimDue(10, 60_000, 86_400_000)).map((c) => c.id));
    await deliveries.onApplicationShutdown();
    const ours: Array<{ id: string; sms_id: string }> = await ds.query(`SELECT id, sms_id FROM webhook_deliveries WHERE organization_id = $1`, [t.organization.id]);
    expect(ours.filter((d) => claimed.has(d.id)).map((d) => d.sms_id)).toEqual([free]);
  });
});

/** Messages whose first delivery is due and free, each with a second one behind it (a delivery role starting on a backlog). */
const DUE = 3000;
const LIMIT = 40;

// ADR 0300: from statistics taken before the backlog, Postgres planned the claim as a bitmap scan of
// every due pending row, sorted, then cut to the limit: each claim read all of them (20,000 buffers
// for 40 rows here, 20 ms), the largest cost of a delivery process draining a backlog. Under the
// claim's setting the plan walks the due index in order and stops at the limit.
describe('claiming webhook deliveries from a backlog of due ones (real Postgres)', () => {
  let ds: DataSource;
  let t: Awaited<ReturnType<typeof seedSmsTenancy>>;
  let heads: Set<string>;

  beforeAll(async () => {
    ds = await createDataSource({ url: testEnv().postgresUrl, applicationName: 'webhook-claim-due-spec' }).initialize();
    t = await seedSmsTenancy(ds);
    await ds.query(`INSERT INTO webhooks (organization_id, kind, url, secret) VALUES ($1, 'sms-status', 'http://127.0.0.1:9/sms', $2)`, [t.organization.id, `whsec_${randomBytes(24).toString('base64')}`]);
    await ds.query(`ANALYZE webhook_deliveries`);
    const ids = Array.from({ length: DUE }, () => randomUUID());
    await ds.query(
      `INSERT INTO sms_messages (id, project_id, organization_id, sender_id, destination, country, text, encoding, messages_count, price_per_sms)
       SELECT id, $2, $3, $4, '+447400000000', 'GB', 'x', 'GSM-7', 1, 0.04 FROM unnest($1::uuid[]) AS id`,
      [ids, t.project.id, t.organization.id, t.sender.id],
    );
    const rows: Array<{ id: string }> = await ds.query(
      `INSERT INTO webhook_deliveries (organization_id, project_id, sms_id, body, next_attempt_at)
       SELECT $2, $3, ids.id, '{}', now() - interval '1 hour' + k * interval '1 minute'
         FROM unnest($1::uuid[]) WITH ORDINALITY AS ids(id, n), generate_series(1, 2) AS k ORDER BY ids.n, k
       RETURNING id, next_attempt_at < now() - interval '30 minutes' AS head`,
      [ids, t.organization.id, t.project.id],
    );
    heads = new Set((rows as Array<{ id: string; head: boolean }>).filter((r) => r.head).map((r) => r.id));
  });

  afterAll(async () => {
    await ds?.query(`DELETE FROM organizations WHERE id = $1`, [t?.organization.id]);
    await ds?.destroy();
  });

  it('reads buffers in proportion to what it claims, not to the backlog, and claims heads only', async () => {
    const plan = await explainClaim(ds, [LIMIT, 60, 86_400]);
    // About ten buffers per claimed row (index, heap, the two probes, the update); reading the backlog is thousands.
    expect(plan.Plan['Shared Hit Blocks'] + plan.Plan['Shared Read Blocks']).toBeLessThan(LIMIT * 25);
    const deliveries = new WebhookDeliveries(ds);
    const claimed = await deliveries.claimDue(LIMIT, 60_000, 86_400_000);
    await deliveries.onApplicationShutdown();
    const ours = claimed.filter((c) => heads.has(c.id));
    expect(claimed.length).toBe(LIMIT);
    const all: Array<{ id: string }> = await ds.query(`SELECT id FROM webhook_deliveries WHERE organization_id = $1 AND locked_until IS NOT NULL`, [t.organization.id]);
    // Every one of ours it leased is the head of its message's line.
    expect(all.every((d) => heads.has(d.id))).toBe(true);
    expect(ours.length).toBeGreaterThan(0);
  });
});
