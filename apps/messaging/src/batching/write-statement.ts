/** What runs the statement: a TypeORM EntityManager or a raw pg client, both `query(text, values)`. */
export interface Queryable {
  query(sql: string, values?: unknown[]): Promise<unknown>;
}

/**
 * The writes of one batch as a single statement of data-modifying CTEs (ADR 0254): each
 * statement is a round trip, and a batch's history, outbox, webhook and funds writes touch
 * different tables, so they need not wait on each other. Every part runs once, to completion,
 * whether or not the final SELECT reads it; each keeps the row order of its own `ORDER BY`.
 */
export class WriteStatement {
  private readonly parts: string[] = [];
  private readonly params: unknown[] = [];

  /** A placeholder for `value` (`$n`). */
  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  /** Adds one INSERT / UPDATE / DELETE, its values given through `param`. */
  add(sql: string): this {
    this.parts.push(`w${this.parts.length} AS (${sql})`);
    return this;
  }

  async run(db: Queryable): Promise<void> {
    if (!this.parts.length) return;
    await db.query(`WITH ${this.parts.join(',\n')}\nSELECT 1`, this.params);
  }
}
