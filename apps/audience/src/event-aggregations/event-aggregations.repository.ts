import type { ClickHouse } from '@meld/clickhouse';
import { DATA_SOURCE } from '@meld/db';
import {
  bucketStarts, eventHistogramOf, eventsInScope, eventsWithParameter, eventTermsOf, type EventScope, type HistogramInterval, parameterStatsOf, parameterTermsOf,
} from '@meld/filters';
import { CLICKHOUSE_READER } from '@meld/platform';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { poolRead } from '../shared/pool-read';

export interface Bucket {
  value: string;
  n: string;
}

export interface ParameterStats {
  count: string;
  min: number | null;
  max: number | null;
  avg: number | null;
  sum: number | null;
}

/** Aggregates of a project's events from ClickHouse (ADR 0335); the names they show from Postgres. */
@Injectable()
export class EventAggregationsRepository {
  constructor(
    @Inject(CLICKHOUSE_READER) private readonly ch: ClickHouse,
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
  ) {}

  async scope(scope: EventScope): Promise<{ events: number; first: number; last: number }> {
    const [row] = await this.ch.query<{ events: string; first: number; last: number }>(eventsInScope(scope));
    return { events: Number(row?.events ?? 0), first: Number(row?.first ?? 0), last: Number(row?.last ?? 0) };
  }

  terms(scope: EventScope, field: 'event_type' | 'data_source_id', size: number): Promise<Bucket[]> {
    return this.ch.query<Bucket>(eventTermsOf(scope, field, size));
  }

  async withParameter(scope: EventScope, key: string): Promise<number> {
    const [row] = await this.ch.query<{ n: string }>(eventsWithParameter(scope, key));
    return Number(row?.n ?? 0);
  }

  parameterTerms(scope: EventScope, key: string, size: number): Promise<Bucket[]> {
    return this.ch.query<Bucket>(parameterTermsOf(scope, key, size));
  }

  async stats(scope: EventScope, key: string): Promise<ParameterStats> {
    const [row] = await this.ch.query<ParameterStats>(parameterStatsOf(scope, key));
    return row;
  }

  /** Events per bucket start (unix seconds), every bucket from `first`'s to `last`'s, empty ones at 0. */
  async histogram(scope: EventScope, interval: HistogramInterval, timeZone: string, first: number, last: number): Promise<Array<{ start: number; n: number }>> {
    const [counted, starts] = await Promise.all([
      this.ch.query<{ b: number; n: string }>(eventHistogramOf(scope, interval, timeZone)),
      this.ch.query<{ b: number }>(bucketStarts(interval, timeZone, first, last)),
    ]);
    const counts = new Map(counted.map((r) => [Number(r.b), Number(r.n)]));
    return starts.map((r) => ({ start: Number(r.b), n: counts.get(Number(r.b)) ?? 0 }));
  }

  /** id → uid of the project's data sources. */
  async dataSourceUids(projectId: string): Promise<Map<string, string>> {
    const rows = await poolRead<{ id: string; uid: string }>(this.ds, `SELECT id, uid FROM data_sources WHERE project_id = $1`, [projectId]);
    return new Map(rows.map((r) => [r.id, r.uid]));
  }

  async projectTimeZone(projectId: string): Promise<string> {
    const [row] = await poolRead<{ timezone: string }>(this.ds, `SELECT timezone FROM projects WHERE id = $1`, [projectId]);
    return row?.timezone ?? 'UTC';
  }
}
