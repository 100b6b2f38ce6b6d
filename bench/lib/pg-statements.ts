import type { DataSource } from 'typeorm';

/** One statement's (or one group's) cost over a run, from `pg_stat_statements`. */
export interface StatementCost {
  label: string;
  calls: number;
  execMs: number;
  planMs: number;
  plans: number;
  rows: number;
  blocksHit: number;
  blocksDirtied: number;
  walBytes: number;
}

/**
 * Names of the statements the sms path runs, first match wins; the text is pg_stat_statements'
 * normalised query (its constants are `$n`). A statement no pattern names keeps the start of its text.
 */
const LABELS: Array<[RegExp, string]> = [
  [/^BEGIN/i, 'BEGIN'],
  [/^COMMIT/i, 'COMMIT'],
  [/^ROLLBACK/i, 'ROLLBACK'],
  [/pg_try_advisory_xact_lock/, 'relay: pump lock'],
  [/^SELECT id, (topic, )?key, value, trace FROM "?\w*outbox/i, 'relay: outbox rows read'],
  [/^DELETE FROM "?\w*outbox"? WHERE id = ANY/i, 'relay: outbox rows deleted'],
  [/count\(\*\)::int AS depth/, 'relay: depth metrics'],
  [/^SELECT (r\.n, )?p\.locale/, 'send: context read (one per request, or per group of requests: ADR 0295)'],
  [/^SELECT id, funds::text FROM organizations/, 'send: organizations locked'],
  [/^INSERT INTO sms_messages/, 'send: messages inserted'],
  [/^WITH w0 AS \(UPDATE organizations o SET funds = o\.funds -/, 'send: write (funds, history, outbox, webhooks)'],
  [/^WITH w0 AS \(INSERT INTO sms_links/, 'send: write (links, history, outbox, webhooks)'],
  [/^WITH w0 AS \(INSERT INTO sms_status_history/, 'send: write (history, outbox, webhooks)'],
  [/^SELECT m\.id, m\.status, s\.alias/, 'worker: messages loaded'],
  [/^SELECT m\.id, m\.project_id.*FOR UPDATE OF m/s, 'status: rows locked'],
  [/^WITH r AS MATERIALIZED \(SELECT DISTINCT ON \(smsc_message_id\)/, 'status: rows locked, receipts found by SMSC id (ADR 0316)'],
  [/^SELECT set_config\(/, 'send and status: index-plan settings with BEGIN (ADR 0322)'],
  [/^WITH w0 AS \(UPDATE sms_messages m SET status/, 'status: write (message, history, outbox, webhooks)'],
  [/^SELECT DISTINCT ON \(smsc_message_id\)/, 'receipts: ids by SMSC id'],
  [/^UPDATE webhook_deliveries d SET locked_until/, 'webhooks: claim'],
  [/^SET LOCAL enable_sort/, 'webhooks: claim (its planner setting, with BEGIN)'],
  [/^UPDATE webhook_deliveries d SET status = (\$\d+|'delivered'), attempts/, 'webhooks: delivered'],
  [/^UPDATE webhook_deliveries SET attempts/, 'webhooks: attempt failed'],
  [/^DELETE FROM webhook_deliveries/, 'webhooks: prune'],
  [/^SELECT DISTINCT sms_id::text AS sms_id FROM webhook_deliveries/, 'webhooks: earlier reports still owed (ADR 0323)'],
  [/^INSERT INTO webhook_deliveries \(id,/, 'webhooks: first attempts missed, to the retries (ADR 0323)'],
  [/^SELECT organization_id::text AS organization_id, url, secret FROM webhooks/, 'webhooks: URLs and secrets for first attempts (ADR 0323)'],
  [/FROM sms_messages WHERE status = 'enqueued'/, 'sweep: stale enqueued'],
  [/^LISTEN/i, 'LISTEN'],
];

export function statementLabel(query: string): string {
  const text = query.trim().replace(/\s+/g, ' ');
  for (const [pattern, label] of LABELS) if (pattern.test(text)) return label;
  return text.length > 70 ? `${text.slice(0, 70)}…` : text;
}

/**
 * Per-statement accounting of one database over a measured stretch (ADR 0274): the extension is
 * created in the bench's database, its counters reset for that database only at `start()`, and
 * read, grouped by `statementLabel`, at `stop()`. Needs the server started with
 * `pg_stat_statements` preloaded (`MELD_STACK_PG_STAT_STATEMENTS=1 meld stack up`).
 */
export class PgStatements {
  private dbid = 0;

  constructor(private readonly db: DataSource) {}

  async start(): Promise<void> {
    const [loaded] = await this.db.query(`SELECT current_setting('shared_preload_libraries') ~ 'pg_stat_statements' AS ok`);
    if (!loaded.ok) throw new Error('--pg-statements: the Postgres server does not preload pg_stat_statements (start the stack with MELD_STACK_PG_STAT_STATEMENTS=1)');
    await this.db.query(`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`);
    const [{ oid }] = await this.db.query(`SELECT oid::int AS oid FROM pg_database WHERE datname = current_database()`);
    this.dbid = oid;
    await this.db.query(`SELECT pg_stat_statements_reset(0, $1::oid, 0)`, [this.dbid]);
  }

  /** The statements run since `start()`, grouped by label, most execution + planning time first. */
  async stop(): Promise<StatementCost[]> {
    const rows: Array<Record<string, string>> = await this.db.query(
      `SELECT query, calls, total_exec_time, total_plan_time, plans, rows, shared_blks_hit, shared_blks_dirtied, wal_bytes
         FROM pg_stat_statements WHERE dbid = $1`,
      [this.dbid],
    );
    const groups = new Map<string, StatementCost>();
    for (const r of rows) {
      const label = statementLabel(r.query!);
      const g = groups.get(label) ?? { label, calls: 0, execMs: 0, planMs: 0, plans: 0, rows: 0, blocksHit: 0, blocksDirtied: 0, walBytes: 0 };
      g.calls += Number(r.calls);
      g.execMs += Number(r.total_exec_time);
      g.planMs += Number(r.total_plan_time);
      g.plans += Number(r.plans);
      g.rows += Number(r.rows);
      g.blocksHit += Number(r.shared_blks_hit);
      g.blocksDirtied += Number(r.shared_blks_dirtied);
      g.walBytes += Number(r.wal_bytes);
      groups.set(label, g);
    }
    return [...groups.values()].sort((a, b) => b.execMs + b.planMs - (a.execMs + a.planMs));
  }
}

/** Row changes of the tables written over the run (HOT updates, dead tuples left for vacuum). */
export async function tableChanges(db: DataSource, per: number): Promise<string[]> {
  const rows: Array<Record<string, string>> = await db.query(
    `SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del, n_dead_tup, autovacuum_count + vacuum_count AS vacuums
       FROM pg_stat_user_tables WHERE n_tup_ins + n_tup_upd + n_tup_del > 0 ORDER BY n_tup_ins + n_tup_upd + n_tup_del DESC`,
  );
  const f = (n: string | undefined) => (Number(n) / per).toFixed(2);
  return rows.map((r) => `  ${r.relname}: ${f(r.n_tup_ins)} inserted, ${f(r.n_tup_upd)} updated (${f(r.n_tup_hot_upd)} HOT), ${f(r.n_tup_del)} deleted, ${r.n_dead_tup} dead tuples at the end, ${r.vacuums} vacuums`);
}

/** Bench notes: the statements per message (`per` messages), then their total. */
export function statementNotes(costs: readonly StatementCost[], per: number): string[] {
  const f = (n: number, digits = 1) => (n / per).toFixed(digits);
  const us = (ms: number) => ((ms * 1000) / per).toFixed(0);
  const line = (c: StatementCost) =>
    `${c.label}: ${f(c.calls, 2)} calls, exec ${us(c.execMs)} µs, plan ${us(c.planMs)} µs (${f(c.plans, 2)} plans), ${f(c.rows, 2)} rows, ${f(c.blocksHit)} blocks hit, ${f(c.blocksDirtied, 2)} dirtied, ${f(c.walBytes, 0)} WAL bytes`;
  const total = costs.reduce(
    (t, c) => ({ ...t, calls: t.calls + c.calls, execMs: t.execMs + c.execMs, planMs: t.planMs + c.planMs, plans: t.plans + c.plans, rows: t.rows + c.rows, blocksHit: t.blocksHit + c.blocksHit, blocksDirtied: t.blocksDirtied + c.blocksDirtied, walBytes: t.walBytes + c.walBytes }),
    { label: 'all statements', calls: 0, execMs: 0, planMs: 0, plans: 0, rows: 0, blocksHit: 0, blocksDirtied: 0, walBytes: 0 },
  );
  return [`Postgres statements per message (pg_stat_statements, this database; exec and plan are the backend's elapsed time, waits for a core included on a busy machine): ${line(total)}`, ...costs.map((c) => `  ${line(c)}`)];
}
