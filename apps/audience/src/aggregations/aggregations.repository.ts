import { type ClickHouse, join, raw, sql, type Sql } from '@meld/clickhouse';
import { type AttributeSql, type AudienceFilterNode, audienceCount, audienceSelect, audienceTerms } from '@meld/filters';
import { CLICKHOUSE_READER } from '@meld/platform';
import { Inject, Injectable } from '@nestjs/common';

export interface AudienceStats {
  count: string;
  min: number | null;
  max: number | null;
  avg: number | null;
  sum: number | null;
}

/**
 * The ClickHouse reads of an aggregation request, over the same snapshot and filter as a count (ADR 0333).
 * Queries are built apart from their reads, so a request builds them all (each throws the filter lib's
 * error if too large, ADR 0058) before any runs.
 */
@Injectable()
export class AggregationsRepository {
  constructor(@Inject(CLICKHOUSE_READER) private readonly ch: ClickHouse) {}

  /** Contacts matching the root, and per attribute those with a value (`p<i>`), in one read summing `sign`. */
  countsQuery(projectId: string, root: AudienceFilterNode | undefined, present: readonly Sql[]): Sql {
    return audienceCount({ projectId, root, counts: [['matching'], ...present.map((p, i) => [`p${i}`, p] as const)] });
  }

  termsQuery(projectId: string, root: AudienceFilterNode | undefined, attribute: AttributeSql, multivalue: boolean, limit: number): Sql {
    return audienceTerms({ projectId, root, attribute, multivalue, limit });
  }

  /** count, min, max, avg and sum of a single-valued attribute over the current contacts matching the root that have it. */
  statsQuery(projectId: string, root: AudienceFilterNode | undefined, stored: AttributeSql): Sql {
    const p = stored.present;
    const v = stored.value;
    const columns = join([
      sql`countIf(${p}) AS count`,
      sql`if(countIf(${p}) = 0, NULL, minIf(${v}, ${p})) AS min`,
      sql`if(countIf(${p}) = 0, NULL, maxIf(${v}, ${p})) AS max`,
      sql`if(countIf(${p}) = 0, NULL, avgIf(${v}, ${p})) AS avg`,
      sql`if(countIf(${p}) = 0, NULL, sumIf(${v}, ${p})) AS ${raw('sum')}`,
    ]);
    return audienceSelect({ projectId, root, columns });
  }

  async counts(query: Sql): Promise<Record<string, string>> {
    const [row] = await this.ch.query<Record<string, string>>(query);
    return row ?? {};
  }

  terms(query: Sql): Promise<Array<{ value: string; n: string }>> {
    return this.ch.query(query);
  }

  async stats(query: Sql): Promise<AudienceStats> {
    const [row] = await this.ch.query<AudienceStats>(query);
    return row ?? { count: '0', min: null, max: null, avg: null, sum: null };
  }
}
