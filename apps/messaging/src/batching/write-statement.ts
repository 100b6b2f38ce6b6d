import { statementName } from '../db/prepared';

/** A raw pg client (a transaction's connection): runs named prepared statements. */
export interface Queryable {
  query(config: { name: string; text: string; values: unknown[] }): Promise<unknown>;
}

/**
 * The writes of one batch as a single statement of data-modifying CTEs (ADR 0254): each
 * statement is a round trip, and a batch's history, outbox, webhook and funds writes touch
 * different tables, so they need not wait on each other. Every part runs once, to completion,
 * whether or not the final SELECT reads it; each keeps the row order of its own `ORDER BY`.
 * The statement is prepared under a name of its text (ADR 0322): each connection parses and
 * plans each combination of parts once; run it in a transaction with INDEX_PLANS.
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
    const text = `WITH ${this.parts.join(',\n')}\nSELECT 1`;
    await db.query({ name: statementName('write', text), text, values: this.params });
  }
}
