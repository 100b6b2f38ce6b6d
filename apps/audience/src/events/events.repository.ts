import { type ClickHouse, sql } from '@meld/clickhouse';
import { DATA_SOURCE } from '@meld/db';
import { currentMembersOf } from '@meld/filters';
import { CLICKHOUSE_READER } from '@meld/platform';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { eventParameters } from '../shared/event-parameters';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface StoredEvent {
  id: string;
  type: string;
  /** unix seconds */
  date: number;
  receivedAt: number;
  parameters: Record<string, unknown>;
  dataSourceId: string;
}

/**
 * Events of an audience contact: the audience id is resolved in Postgres (identity-merge's
 * tables), the events are read from ClickHouse, attached through `audience_membership` at read
 * time (the latest row per source contact, argMax by version) and deduplicated by event id.
 */
@Injectable()
export class EventsRepository {
  constructor(
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    @Inject(CLICKHOUSE_READER) private readonly ch: ClickHouse,
  ) {}

  /** The live audience contact an id names: itself, or the survivor that absorbed it; null when neither lives. */
  async resolveAudienceId(projectId: string, audienceId: string): Promise<string | null> {
    if (!UUID.test(audienceId)) return null;
    const rows: Array<{ id: string }> = await this.ds.query(
      `SELECT c.id FROM audience_contacts c
        WHERE c.project_id = $1 AND c.id = COALESCE((SELECT a.survivor_id FROM audience_aliases a WHERE a.project_id = $1 AND a.absorbed_id = $2), $2)`,
      [projectId, audienceId],
    );
    return rows[0]?.id ?? null;
  }

  private scope(projectId: string, audienceId: string, since: Date) {
    return sql`
      FROM events
      WHERE project_id = ${projectId} AND event_date >= ${since}
        AND (data_source_id, user_id) IN (${currentMembersOf(projectId, audienceId)})`;
  }

  async count(projectId: string, audienceId: string, since: Date): Promise<number> {
    const [row] = await this.ch.query<{ n: string }>(sql`SELECT uniqExact(event_id) AS n ${this.scope(projectId, audienceId, since)}`);
    return Number(row?.n ?? 0);
  }

  /** Newest first (event date, then reception, then id: a stable order for paging). */
  async list(projectId: string, audienceId: string, since: Date, start: number, limit: number): Promise<StoredEvent[]> {
    const rows = await this.ch.query<{ id: string; type: string; ts: string; rts: string; keys: string[]; values: string[]; ds: string }>(sql`
      SELECT event_id AS id, any(event_type) AS type, toUInt32(any(event_date)) AS ts, toUInt32(any(received_at)) AS rts,
             any(param_keys) AS keys, any(param_values) AS values, any(data_source_id) AS ds
      ${this.scope(projectId, audienceId, since)}
      GROUP BY event_id
      ORDER BY ts DESC, rts DESC, id DESC
      LIMIT ${start}, ${limit}`);
    return rows.map((r) => ({
      id: r.id,
      type: r.type,
      date: Number(r.ts),
      receivedAt: Number(r.rts),
      parameters: eventParameters(r.keys, r.values),
      dataSourceId: r.ds,
    }));
  }
}
