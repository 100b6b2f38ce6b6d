import type { ClickHouse, Sql } from '@meld/clickhouse';
import { CLICKHOUSE_READER } from '@meld/platform';
import { Inject, Injectable } from '@nestjs/common';

/**
 * Runs the probe reads (coverage-sql.ts, volumes-sql.ts); UInt64 figures arrive as strings, so every
 * column is read through Number, except a null: ClickHouse writes a NaN (avgArray over no value) as
 * JSON null, which Number would turn into 0, so it is read as NaN, a figure that was not measured.
 * Reads for a request: through the read-only client bounded in time and memory (ADR 0114).
 */
@Injectable()
export class ProbeReads {
  constructor(@Inject(CLICKHOUSE_READER) private readonly ch: ClickHouse) {}

  async row(query: Sql): Promise<Map<string, number>> {
    const [row] = await this.ch.query<Record<string, string | number | null>>(query);
    return new Map(Object.entries(row ?? {}).map(([k, v]) => [k, v === null ? Number.NaN : Number(v)]));
  }

  rows<T>(query: Sql): Promise<T[]> {
    return this.ch.query<T>(query);
  }
}
