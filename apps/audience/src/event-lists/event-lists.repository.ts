import type { ClickHouse } from '@meld/clickhouse';
import { DATA_SOURCE, isUuid } from '@meld/db';
import { audienceIdsOf, type EventPage, type EventPageOptions, type EventRow, windowedEventsPage } from '@meld/filters';
import { CLICKHOUSE_READER } from '@meld/platform';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { poolRead } from '../shared/pool-read';

/** The events of listings from ClickHouse (date windows, ADR 0332); data sources from Postgres. */
@Injectable()
export class EventListsRepository {
  constructor(
    @Inject(CLICKHOUSE_READER) private readonly ch: ClickHouse,
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
  ) {}

  page(options: EventPageOptions): Promise<EventPage> {
    return windowedEventsPage((statement) => this.ch.query(statement), options);
  }

  /** `data_source_id/user_id` → the audience contact each source contact belongs to now. */
  async audienceIds(projectId: string, rows: readonly EventRow[]): Promise<Map<string, string>> {
    const pairs = [...new Map(rows.map((r) => [`${r.ds}/${r.user}`, { ds: r.ds, user: r.user }])).values()];
    if (!pairs.length) return new Map();
    const found = await this.ch.query<{ ds: string; user: string; aid: string }>(audienceIdsOf(projectId, pairs));
    return new Map(found.map((r) => [`${r.ds}/${r.user}`, r.aid]));
  }

  /** A data source of the project by uid or id; null when it has none such. */
  async dataSourceId(projectId: string, key: string): Promise<string | null> {
    const rows = await poolRead<{ id: string }>(this.ds, `SELECT id FROM data_sources WHERE project_id = $1 AND (uid = $2 OR ($3::boolean AND id::text = lower($2)))`, [projectId, key, isUuid(key)]);
    return rows[0]?.id ?? null;
  }

  async dataSourceUids(projectId: string): Promise<string[]> {
    return (await poolRead<{ uid: string }>(this.ds, `SELECT uid FROM data_sources WHERE project_id = $1 ORDER BY uid`, [projectId])).map((r) => r.uid);
  }
}
