import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ident, sql, type ClickHouse } from '../../libs/clickhouse/src';
import type { DataSource } from 'typeorm';

export interface SettleTargets {
  /**
   * Merges in this database; `optimize` tables are first merged whole (OPTIMIZE … FINAL), so
   * no big merge of the rows just written can start in the middle of the next phase.
   */
  clickhouse?: { ch: ClickHouse; database: string; optimize?: string[] };
  /** Autovacuum workers on this DataSource's database. */
  postgres?: DataSource;
}

/**
 * Waits (at most `timeoutMs`) until the stores have no background work left from the phase
 * before: ClickHouse merges in the bench's database and Postgres autovacuum workers on its
 * database. Millions of rows just written keep a core busy merging (ClickHouse) and vacuuming
 * (`event_ids`) for tens of seconds; a phase timed meanwhile measures that aftermath, not
 * the load it applies. Then a Postgres CHECKPOINT: the WAL of the phase before would otherwise
 * trigger one during the next, and its writes and fsyncs stall commits for 100-200 ms; and a
 * sync, for the same reason on the files ClickHouse wrote. Returns what it waited for, for the
 * report.
 */
export async function settleStores(targets: SettleTargets, timeoutMs = 120_000): Promise<string> {
  const started = Date.now();
  let seen = { merges: 0, vacuums: 0 };
  // A merge started a few seconds into a latency phase writes hundreds of MB (a million events
  // in a few parts): the disk stalls every commit and insert behind it, and whether one lands in
  // a 20 s phase can decide its p99.
  for (const table of targets.clickhouse?.optimize ?? []) await targets.clickhouse!.ch.command(sql`OPTIMIZE TABLE ${ident(table)} FINAL`);
  for (;;) {
    const { clickhouse, postgres } = targets;
    const [m] = clickhouse ? await clickhouse.ch.query<{ n: string }>(sql`SELECT toString(count()) AS n FROM system.merges WHERE database = ${clickhouse.database}`) : [{ n: '0' }];
    const [v]: Array<{ n: string }> = postgres
      ? await postgres.query(`SELECT count(*)::text AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker' AND datname = current_database()`)
      : [{ n: '0' }];
    const now = { merges: Number(m.n), vacuums: Number(v.n) };
    seen = { merges: Math.max(seen.merges, now.merges), vacuums: Math.max(seen.vacuums, now.vacuums) };
    const waited = ((Date.now() - started) / 1000).toFixed(0);
    const what = [...(clickhouse ? [`${seen.merges} ClickHouse merges`] : []), ...(postgres ? [`${seen.vacuums} autovacuum workers`] : [])].join(', ');
    if (now.merges === 0 && now.vacuums === 0) return `settled in ${waited} s (up to ${what})${postgres ? await checkpoint(postgres) : ''}${await flushPageCache()}`;
    if (Date.now() - started > timeoutMs) return `not settled after ${waited} s (${now.merges} merges, ${now.vacuums} autovacuum workers still running): timing anyway`;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

/**
 * sync(1): the kernel's dirty pages to disk. ClickHouse writes its parts (the merges and
 * OPTIMIZE above) without fsync, and the kernel flushes them 30 s later in bursts of hundreds of
 * MB every 5 s: measured before a latency phase of a 1M-event run, 1.1 GB dirty, flushed through
 * the phase while the load average sat at 11-15 on two cores. Those writes belong to the
 * phase before.
 */
async function flushPageCache(): Promise<string> {
  const started = Date.now();
  try {
    await promisify(execFile)('sync');
    return `, sync ${Date.now() - started} ms`;
  } catch (err) {
    return `, no sync (${(err as Error).message})`;
  }
}

/** CHECKPOINT (needs a superuser or pg_checkpoint, as on the local stack): "" or what it cost. */
async function checkpoint(postgres: DataSource): Promise<string> {
  const started = Date.now();
  try {
    await postgres.query('CHECKPOINT');
    return `, checkpoint ${Date.now() - started} ms`;
  } catch (err) {
    return `, no checkpoint (${(err as Error).message})`;
  }
}
