import type { ClickHouse, Sql } from '@meld/clickhouse';
import { CLICKHOUSE } from '@meld/platform';
import { Inject, Injectable } from '@nestjs/common';

/**
 * Runs the probe reads (coverage-sql.ts, volumes-sql.ts); UInt64 figures arrive as strings, so every
 * column is read through Number, except a null: ClickHouse writes a NaN (avgArray over no value) as
 * JSON null, which Number would turn into 0, so it is read as NaN, a figure that was not measured.
 */
@Injectable()
export class ProbeReads {
  constructor(@Inject(CLICKHOUSE) private readonly ch: ClickHouse) {}

  async row(query: Sql): Promise<Map<string, number>> {
    const [row] = await this.ch.query<Record<string, string | number | null>>(query);
    return new Map(Object.entries(row ?? {}).map(([k, v]) => [k, v === null ? Number.NaN : Number(v)]));
  }

  rows<T>(query: Sql): Promise<T[]> {
    return this.ch.query<T>(query);
  }
}
