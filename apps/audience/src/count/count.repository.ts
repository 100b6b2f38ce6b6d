import { type ClickHouse, join, sql, type Sql } from '@meld/clickhouse';
import { type AudienceFilterNode, audienceSelect } from '@meld/filters';
import { CLICKHOUSE_READER } from '@meld/platform';
import { Inject, Injectable } from '@nestjs/common';

/**
 * What a count reads: the current audience snapshot in ClickHouse (`audience_contacts`, written by the probes
 * sink from meld.audience.v1), counted exactly: FINAL, no SAMPLE.
 */
@Injectable()
export class CountRepository {
  constructor(@Inject(CLICKHOUSE_READER) private readonly ch: ClickHouse) {}

  /** One row of `columns` (aggregates) over the current contacts matching `root`; UInt64 values arrive as strings. */
  async aggregate(projectId: string, root: AudienceFilterNode | undefined, columns: Sql[]): Promise<Record<string, string>> {
    const [row] = await this.ch.query<Record<string, string>>(audienceSelect({ projectId, root, columns: join(columns) }));
    return row ?? {};
  }
}

export const countAll = sql`count() AS matching`;
