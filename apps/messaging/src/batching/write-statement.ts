/** What runs the statement: a TypeORM EntityManager (rows) or a raw pg client (a result with `rows`), both `query(text, values)`. */
export interface Queryable {
  query(sql: string, values?: unknown[]): Promise<unknown>;
}

/**
 * The writes of one batch as a single statement of data-modifying CTEs (ADR 0254): each
 * statement is a round trip, and a batch's history, outbox, webhook and funds writes touch
 * different tables, so they need not wait on each other. Every part runs once, to completion,
 * whether or not the final SELECT reads it; each keeps the row order of its own `ORDER BY`.
 * One part may give the statement its rows (`returning`); without one it answers `SELECT 1`.
 */
export class WriteStatement {
  private readonly parts: string[] = [];
  private readonly params: unknown[] = [];
  private select = 'SELECT 1';

  /** A placeholder for `value` (`$n`). */
  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  /** Adds one INSERT / UPDATE / DELETE, its values given through `param`; answers the part's name. */
  add(sql: string): string {
    const name = `w${this.parts.length}`;
    this.parts.push(`${name} AS (${sql})`);
    return name;
  }

  /** Adds a part (with its RETURNING) whose rows the statement answers, read by `select(name)`. */
  returning(sql: string, select: (part: string) => string): void {
    if (this.select !== 'SELECT 1') throw new Error('a write statement returns the rows of one part only');
    this.select = select(this.add(sql));
  }

  /** The rows of the `returning` part; none without one. */
  async run<R = never>(db: Queryable): Promise<R[]> {
    if (!this.parts.length) return [];
    const result = await db.query(`WITH ${this.parts.join(',\n')}\n${this.select}`, this.params);
    if (this.select === 'SELECT 1') return [];
    return (Array.isArray(result) ? result : (result as { rows: R[] }).rows) as R[];
  }
}
