import { randomUUID } from 'node:crypto';
import { MESSAGING_CONNECTOR, type OwnDatabase, beginWith, createDataSource } from '@meld/db';
import { privateDatabase } from '@meld/fixtures';
import { testEnv } from '@meld/testing';
import type { DataSource } from 'typeorm';
import { SmsAudienceBackfill } from '../src/audience/sms-audience-backfill';
import { ListSms } from '../src/sms/read/list-sms.usecase';
import { SmsRepository } from '../src/sms/sms.repository';
import type { SmsOutboxRelay } from '../src/sms/status/sms-outbox-relay';
import { StatusWriter, lockRowsSql } from '../src/sms/status/status-writer';
import { WebhookDeliveries } from '../src/webhooks/webhook-deliveries.repository';
import type { WebhookDispatcher } from '../src/webhooks/webhook-dispatcher';
import { WebhookOutbox } from '../src/webhooks/webhook-outbox';
import { seedSmsTenancy } from './sms-tenancy';

const GROWN = 5000;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}
/** Every node of a plan, as "<node type> <relation or index>". */
const planNodes = (n: PlanNode): string[] => [`${n['Node Type']} ${n['Index Name'] ?? n['Relation Name'] ?? ''}`.trim(), ...(n.Plans ?? []).flatMap(planNodes)];

// ADR 0275: the receipts' lookup and the webhook completions were named prepared statements;
// each connection kept the generic plan it made while the tables were a few pages (a
// sequential scan, a hash join over one), so once they held thousands of rows every receipt
// batch and every completion read all of them. Planned at each call, they use the indexes.
// The receipts' lookup is now part of the status batch's locking statement (ADR 0316).
describe('statements over tables grown from empty keep index plans (real Postgres, a database of its own)', () => {
  let own: OwnDatabase;
  let ds: DataSource;
  let t: Awaited<ReturnType<typeof seedSmsTenancy>>;

  beforeAll(async () => {
    own = await privateDatabase(testEnv().postgresUrl, 'grown_tables');
    // One connection: every call below shares its plan cache, as a busy pool's connections do.
    ds = await createDataSource({ url: own.url, applicationName: 'grown-tables-spec', poolSize: 1 }).initialize();
    t = await seedSmsTenancy(ds);
  });
  afterAll(async () => {
    await ds?.destroy();
    await own?.drop();
  });

  const seqScans = async (table: string): Promise<number> => {
    // A backend reports its counters at most once a second, the rest up to ten seconds later; the
    // one connection's are flushed as it goes idle after this call (Postgres 15). A wait of 1.5 s
    // alone read them before the scans of the calls on empty tables had been reported.
    await ds.query(`SELECT pg_stat_force_next_flush()`);
    const [row] = await ds.query(`SELECT seq_scan::int AS n FROM pg_stat_user_tables WHERE relname = $1`, [table]);
    return row.n;
  };

  it('finds messages by SMSC id and completes webhook deliveries without scanning the tables', async () => {
    const deliveries = new WebhookDeliveries(ds);
    const lockBySmscId = async (smscId: string): Promise<Array<{ id: string; receipt_of: string }>> => {
      const tx = await beginWith<{ id: string; receipt_of: string }>(ds, lockRowsSql([], [smscId]));
      await tx.release();
      return tx.rows;
    };
    // While the tables are empty: more than the five calls after which Postgres settles on a generic plan.
    for (let i = 0; i < 8; i++) {
      await lockBySmscId(`none-${i}`);
      await deliveries.delivered([{ id: randomUUID(), statusCode: 204 }]);
    }
    await ds.query(
      `WITH m AS (INSERT INTO sms_messages (project_id, organization_id, sender_id, destination, country, text, encoding, messages_count, price_per_sms, smsc_message_id)
                  SELECT $1, $2, $3, '+447400000000', 'GB', 'x', 'GSM-7', 1, 0.04, 'smsc-' || i FROM generate_series(1, $4::int) i RETURNING id)
       INSERT INTO webhook_deliveries (organization_id, project_id, sms_id, body) SELECT $2, $1, id, '{}' FROM m`,
      [t.project.id, t.organization.id, t.sender.id, GROWN],
    );
    const [delivery] = await ds.query(`SELECT d.id, d.sms_id FROM webhook_deliveries d JOIN sms_messages m ON m.id = d.sms_id WHERE m.smsc_message_id = 'smsc-42'`);

    const [messagesBefore, deliveriesBefore] = [await seqScans('sms_messages'), await seqScans('webhook_deliveries')];
    expect((await lockBySmscId('smsc-42')).map((r) => [r.receipt_of, r.id])).toEqual([['smsc-42', delivery.sms_id]]);
    await deliveries.delivered([{ id: delivery.id, statusCode: 204 }]);
    expect(await seqScans('sms_messages')).toBe(messagesBefore);
    expect(await seqScans('webhook_deliveries')).toBe(deliveriesBefore);
    expect((await ds.query(`SELECT status FROM webhook_deliveries WHERE id = $1`, [delivery.id]))[0].status).toBe('delivered');
  });

  // ADR 0322: the status batch's write is a named prepared statement, run on a generic plan made
  // on whatever size the tables had; INDEX_PLANS keeps that plan on the primary key.
  it("writes status changes through the prepared write's index plan, made while the table was small", async () => {
    const nudged = { nudge: () => undefined };
    const writer = new StatusWriter(ds, nudged as unknown as SmsOutboxRelay, new WebhookOutbox(ds, new WebhookDeliveries(ds), nudged as unknown as WebhookDispatcher));
    const insert = async (n: number): Promise<string[]> =>
      (
        await ds.query(
          `INSERT INTO sms_messages (project_id, organization_id, sender_id, destination, country, text, encoding, messages_count, price_per_sms)
           SELECT $1, $2, $3, '+447400000000', 'GB', 'x', 'GSM-7', 1, 0.04 FROM generate_series(1, $4::int) RETURNING id`,
          [t.project.id, t.organization.id, t.sender.id, n],
        )
      ).map((r: { id: string }) => r.id);
    // More than the five runs after which Postgres settles on a generic plan, on a table of a few rows.
    await ds.query(`TRUNCATE sms_messages CASCADE`);
    for (const id of await insert(8)) expect(await writer.change(id, { status: 'sent', smscMessageId: `early-${id}` })).toBe(true);
    const [grown] = await insert(GROWN);
    const before = await seqScans('sms_messages');
    expect(await writer.change(grown!, { status: 'sent', smscMessageId: 'grown' })).toBe(true);
    expect(await seqScans('sms_messages')).toBe(before);
    expect((await ds.query(`SELECT status, smsc_message_id FROM sms_messages WHERE id = $1`, [grown]))[0]).toEqual({ status: 'sent', smsc_message_id: 'grown' });

    // ADR 0325: no index reads `status`, so the receipt's update is HOT (its page has room: fillfactor).
    const hotUpdates = async (): Promise<number> => {
      await ds.query(`SELECT pg_stat_force_next_flush()`);
      return (await ds.query(`SELECT n_tup_hot_upd::int AS n FROM pg_stat_user_tables WHERE relname = 'sms_messages'`))[0].n;
    };
    const hotBefore = await hotUpdates();
    expect(await writer.change(grown!, { status: 'delivered' })).toBe(true);
    expect(await hotUpdates()).toBe(hotBefore + 1);
  });

  it('keeps `status` out of the indexes of sms_messages, and the sweep finds the stale messages by index (ADR 0325)', async () => {
    const indexed: Array<{ name: string }> = await ds.query(
      `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attname = 'status'
        WHERE i.indrelid = 'sms_messages'::regclass
          AND (a.attnum = ANY(i.indkey) OR coalesce(pg_get_expr(i.indpred, i.indrelid), '') ~ '\mstatus\M' OR coalesce(pg_get_expr(i.indexprs, i.indrelid), '') ~ '\mstatus\M')`,
    );
    expect(indexed).toEqual([]);
    const [stale] = (
      await ds.query(
        `INSERT INTO sms_messages (project_id, organization_id, sender_id, destination, country, text, encoding, messages_count, price_per_sms, created_at)
         VALUES ($1, $2, $3, '+447400000000', 'GB', 'x', 'GSM-7', 1, 0.04, now() - interval '1 minute') RETURNING id`,
        [t.project.id, t.organization.id, t.sender.id],
      )
    ).map((r: { id: string }) => r.id);
    const before = await seqScans('sms_messages');
    expect((await new SmsRepository(ds).staleEnqueued(30_000)).map((m) => m.id)).toEqual([stale]);
    expect(await seqScans('sms_messages')).toBe(before);
  });

  // ADR 0159: the list's audienceId filter compares the stored audience_id with the ids whose
  // contact is now the one given, so a contact's history is read through (project_id, audience_id),
  // not by resolving every message of the project to its current contact.
  it("lists one contact's messages, merged ones included, through the audience index of a grown table", async () => {
    const [survivor, absorbed] = [randomUUID(), randomUUID()];
    await ds.query(`INSERT INTO audience_aliases (project_id, absorbed_id, survivor_id) VALUES ($1, $2, $3)`, [t.project.id, absorbed, survivor]);
    await ds.query(
      `INSERT INTO sms_messages (project_id, organization_id, sender_id, audience_id, destination, country, text, encoding, messages_count, price_per_sms)
       SELECT $1, $2, $3, CASE i WHEN 1 THEN $5::uuid WHEN 2 THEN $6::uuid ELSE gen_random_uuid() END, '+447400000000', 'GB', 'x', 'GSM-7', 1, 0.04
         FROM generate_series(1, $4::int) i`,
      [t.project.id, t.organization.id, t.sender.id, 4 * GROWN, survivor, absorbed],
    );
    await ds.query(`ANALYZE sms_messages`);
    const query = jest.spyOn(ds, 'query');
    const listed = await new ListSms(new SmsRepository(ds)).execute({ projectId: t.project.id, queryString: `audienceId_in=${absorbed}|${randomUUID()}`, mayReadPii: false });
    expect([listed.entity.map((m) => m.audienceId), listed.metadata.total]).toEqual([[survivor, survivor], 2]);
    const reads = query.mock.calls.filter(([sql]) => sql.includes('FROM sms_messages m'));
    query.mockRestore();
    expect(reads).toHaveLength(2);
    for (const [sql, params] of reads) {
      const [{ 'QUERY PLAN': [plan] }] = await ds.query(`EXPLAIN (FORMAT JSON) ${sql}`, params);
      const onMessages = planNodes(plan.Plan).filter((n) => n.includes('sms_messages'));
      expect(onMessages).toContainEqual(expect.stringMatching(/^(Index|Index Only|Bitmap Index) Scan IDX_sms_messages_audience$/));
      expect(onMessages.filter((n) => !/^(Bitmap Heap Scan sms_messages|(Index|Index Only|Bitmap Index) Scan IDX_sms_messages_audience)$/.test(n))).toEqual([]);
    }
  });

  // ADR 0184: a snapshot naming our contact of a number, and the send's own update after its commit,
  // find that number's messages without audience id through the partial unmerged index, whatever
  // the number of the project's other messages, with or without an id.
  it("gives a number's messages without audience id their id through the unmerged index of a grown table", async () => {
    const phone = '+447499000001';
    const [{ id: messaging }] = await ds.query(
      `INSERT INTO data_sources (project_id, uid, name, connector) VALUES ($1, 'meld-messaging', 'Meld messaging', $2) ON CONFLICT (project_id, uid) DO UPDATE SET name = EXCLUDED.name RETURNING id`,
      [t.project.id, MESSAGING_CONNECTOR],
    );
    const audienceId = randomUUID();
    await ds.query(`INSERT INTO audience_members (project_id, data_source_id, user_id, audience_id) VALUES ($1, $2, $3, $4)`, [t.project.id, messaging, phone, audienceId]);
    await ds.query(
      `INSERT INTO sms_messages (project_id, organization_id, sender_id, audience_id, destination, country, text, encoding, messages_count, price_per_sms)
       SELECT $1, $2, $3, CASE WHEN i % 4 = 0 THEN NULL ELSE gen_random_uuid() END, '+4474' || lpad(i::text, 8, '0'), 'GB', 'x', 'GSM-7', 1, 0.04
         FROM generate_series(1, $4::int) i`,
      [t.project.id, t.organization.id, t.sender.id, 4 * GROWN],
    );
    const [first, second] = (
      await ds.query(
        `INSERT INTO sms_messages (project_id, organization_id, sender_id, destination, country, text, encoding, messages_count, price_per_sms)
         SELECT $1, $2, $3, $4, 'GB', 'x', 'GSM-7', 1, 0.04 FROM generate_series(1, 2) RETURNING id`,
        [t.project.id, t.organization.id, t.sender.id, phone],
      )
    ).map((r: { id: string }) => r.id);
    await ds.query(`ANALYZE sms_messages`);

    const backfill = new SmsAudienceBackfill(ds);
    const query = jest.spyOn(ds, 'query');
    expect(await backfill.stored(first!)).toBe(audienceId);
    expect(await backfill.merged([{ projectId: t.project.id, members: [`${messaging}/${phone}`] }])).toBe(1);
    const [stored, merged] = query.mock.calls.filter(([sql]) => sql.includes('UPDATE sms_messages m'));
    query.mockRestore();
    expect((await ds.query(`SELECT audience_id FROM sms_messages WHERE id = $1`, [second]))[0].audience_id).toBe(audienceId);
    /** The scans of sms_messages in a statement's plan (the update itself and a bitmap's heap visit aside). */
    const scans = async ([sql, params]: [string, unknown[]?]) => {
      const [{ 'QUERY PLAN': [plan] }] = await ds.query(`EXPLAIN (FORMAT JSON) ${sql}`, params);
      return planNodes(plan.Plan).filter((n) => n.includes('sms_messages') && !/^(ModifyTable|Bitmap Heap Scan) sms_messages$/.test(n));
    };
    expect(await scans(stored as [string, unknown[]])).toEqual(['Index Scan PK_sms_messages']);
    expect(await scans(merged as [string, unknown[]])).toEqual([expect.stringMatching(/^(Index|Bitmap Index) Scan IDX_sms_messages_unmerged$/)]);
  });
});
