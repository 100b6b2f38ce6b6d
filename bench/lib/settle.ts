import { sql, type ClickHouse } from '../../libs/clickhouse/src';
import type { DataSource } from 'typeorm';

/**
 * Waits (at most `timeoutMs`) until the stores have no background work left from the phase
 * before: ClickHouse merges in the bench's database (when given) and Postgres autovacuum
 * workers on its database. A million rows just written keep a core busy merging (ClickHouse) and vacuuming
 * (`event_ids`) for tens of seconds; a latency phase started meanwhile measures that
 * aftermath, not the load it applies. Returns what it waited for, for the report.
 */
export async function settleStores(ch: ClickHouse | null, chDatabase: string, pg: DataSource, timeoutMs = 120_000): Promise<string> {
  const started = Date.now();
  let seen = { merges: 0, vacuums: 0 };
  for (;;) {
    const [m] = ch ? await ch.query<{ n: string }>(sql`SELECT toString(count()) AS n FROM system.merges WHERE database = ${chDatabase}`) : [{ n: '0' }];
    const [v]: Array<{ n: string }> = await pg.query(`SELECT count(*)::text AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker' AND datname = current_database()`);
    const now = { merges: Number(m.n), vacuums: Number(v.n) };
    seen = { merges: Math.max(seen.merges, now.merges), vacuums: Math.max(seen.vacuums, now.vacuums) };
    const waited = ((Date.now() - started) / 1000).toFixed(0);
    if (now.merges === 0 && now.vacuums === 0) return `settled in ${waited} s (up to ${seen.merges} ClickHouse merges, ${seen.vacuums} autovacuum workers)`;
    if (Date.now() - started > timeoutMs) return `not settled after ${waited} s (${now.merges} merges, ${now.vacuums} autovacuum workers still running)`;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}
