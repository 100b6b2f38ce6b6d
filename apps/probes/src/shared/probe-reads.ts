import type { ClickHouse, Sql } from '@meld/clickhouse';
import { CLICKHOUSE } from '@meld/platform';
import { Inject, Injectable } from '@nestjs/common';

/** Runs the probe reads (coverage-sql.ts, volumes-sql.ts); UInt64 figures arrive as strings, so every column is read through Number. */
@Injectable()
export class ProbeReads {
  constructor(@Inject(CLICKHOUSE) private readonly ch: ClickHouse) {}

  async row(query: Sql): Promise<Map<string, number>> {
    const [row] = await this.ch.query<Record<string, string | number>>(query);
    return new Map(Object.entries(row ?? {}).map(([k, v]) => [k, Number(v)]));
  }

  rows<T>(query: Sql): Promise<T[]> {
    return this.ch.query<T>(query);
  }
}
