import type { ClickHouse, Sql } from '@meld/clickhouse';
import { type AudienceFilterNode, audienceCount } from '@meld/filters';
import { CLICKHOUSE_READER } from '@meld/platform';
import { Inject, Injectable } from '@nestjs/common';

/**
 * What a count reads: the current audience snapshot in ClickHouse (`audience_snapshot`, the collapsing table the
 * probes sink writes from meld.audience.v1), counted exactly by summing `sign` in one plain read: no FINAL, no
 * SAMPLE (ADR 0243).
 */
@Injectable()
export class CountRepository {
  constructor(@Inject(CLICKHOUSE_READER) private readonly ch: ClickHouse) {}

  /** One row of counts (name → condition; none: every contact matching `root`); Int64 values arrive as strings. */
  async count(projectId: string, root: AudienceFilterNode | undefined, counts: ReadonlyArray<readonly [string, Sql?]>): Promise<Record<string, string>> {
    const [row] = await this.ch.query<Record<string, string>>(audienceCount({ projectId, root, counts }));
    return row ?? {};
  }
}

/** The count of every contact matching the root. */
export const MATCHING = ['matching'] as const;
