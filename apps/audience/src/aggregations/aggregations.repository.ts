import { type ClickHouse, join, raw, sql, type Sql } from '@meld/clickhouse';
import { type AttributeSql, type AudienceFilterNode, audienceCount, audienceSelect, audienceTerms } from '@meld/filters';
import { CLICKHOUSE_READER } from '@meld/platform';
import { Inject, Injectable } from '@nestjs/common';

/** The ClickHouse reads of an aggregation request, over the same snapshot and filter as a count (ADR 0333). */
@Injectable()
export class AggregationsRepository {
  constructor(@Inject(CLICKHOUSE_READER) private readonly ch: ClickHouse) {}

  /** Contacts matching the root, and per attribute those with a value (`p<i>`), in one read summing `sign`. */
  async counts(projectId: string, root: AudienceFilterNode | undefined, present: readonly Sql[]): Promise<Record<string, string>> {
    const [row] = await this.ch.query<Record<string, string>>(audienceCount({ projectId, root, counts: [['matching'], ...present.map((p, i) => [`p${i}`, p] as const)] }));
    return row ?? {};
  }

  terms(projectId: string, root: AudienceFilterNode | undefined, attribute: AttributeSql, multivalue: boolean, limit: number): Promise<Array<{ value: string; n: string }>> {
    return this.ch.query(audienceTerms({ projectId, root, attribute, multivalue, limit }));
  }

  /** count, min, max, avg and sum of a single-valued attribute over the current contacts matching the root that have it. */
  async stats(projectId: string, root: AudienceFilterNode | undefined, stored: AttributeSql): Promise<{ count: string; min: number | null; max: number | null; avg: number | null; sum: number | null }> {
    const p = stored.present;
    const v = stored.value;
    const columns = join([
      sql`countIf(${p}) AS count`,
      sql`if(countIf(${p}) = 0, NULL, minIf(${v}, ${p})) AS min`,
      sql`if(countIf(${p}) = 0, NULL, maxIf(${v}, ${p})) AS max`,
      sql`if(countIf(${p}) = 0, NULL, avgIf(${v}, ${p})) AS avg`,
      sql`if(countIf(${p}) = 0, NULL, sumIf(${v}, ${p})) AS ${raw('sum')}`,
    ]);
    const [row] = await this.ch.query<{ count: string; min: number | null; max: number | null; avg: number | null; sum: number | null }>(audienceSelect({ projectId, root, columns }));
    return row ?? { count: '0', min: null, max: null, avg: null, sum: null };
  }
}
