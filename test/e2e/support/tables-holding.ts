import type { Client } from 'pg';

/**
 * The tables of the schema with rows whose text holds `needle`, as `table (rows)`: what a
 * contact delete must leave behind of a person's data is nothing (ADRs 0038, 0358).
 */
export async function tablesHolding(db: Client, needle: string): Promise<string[]> {
  const tables = (await db.query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)).rows.map((r) => r.tablename as string);
  const found: string[] = [];
  for (const t of tables) {
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM "${t}" x WHERE x::text LIKE '%' || $1 || '%'`, [needle]);
    if (rows[0].n > 0) found.push(`${t} (${rows[0].n})`);
  }
  return found;
}
