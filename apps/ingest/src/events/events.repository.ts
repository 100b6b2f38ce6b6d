import { DATA_SOURCE } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import type { EventTypeRule } from './event-item';

/** All I/O of event writes: the project's event types and the event-id dedup set. */
@Injectable()
export class EventsRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  transaction<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.ds.transaction(work);
  }

  /** The event types named by a batch, with their declared parameters. */
  async eventTypes(projectId: string, uids: string[]): Promise<Map<string, EventTypeRule>> {
    if (uids.length === 0) return new Map();
    const types: { id: string; uid: string; automation: boolean }[] = await this.ds.query(
      `SELECT id, uid, automation FROM event_types WHERE project_id = $1 AND uid = ANY($2::text[])`,
      [projectId, uids],
    );
    const params: { event_type_id: string; parameter: string; data_type: string; required: boolean; multi_value: number; max_length: number | null }[] =
      types.length === 0
        ? []
        : await this.ds.query(
            `SELECT event_type_id, parameter, data_type, required, multi_value, max_length FROM event_parameters WHERE event_type_id = ANY($1::uuid[])`,
            [types.map((t) => t.id)],
          );
    return new Map(
      types.map((t) => [
        t.uid,
        {
          ...t,
          parameters: params
            .filter((p) => p.event_type_id === t.id)
            .map((p) => ({ parameter: p.parameter, dataType: p.data_type as EventTypeRule['parameters'][number]['dataType'], required: p.required, multiValue: p.multi_value, maxLength: p.max_length })),
        },
      ]),
    );
  }

  /** Marks the ids as accepted; returns those that were new (a resent id is not). Held until the caller's COMMIT. */
  async markNew(tx: EntityManager, projectId: string, eventIds: string[]): Promise<Set<string>> {
    if (eventIds.length === 0) return new Set();
    const rows: { event_id: string }[] = await tx.query(
      `WITH ins AS (
         INSERT INTO event_ids (project_id, event_id) SELECT $1, e FROM unnest($2::text[]) AS e ORDER BY e
         ON CONFLICT DO NOTHING RETURNING event_id)
       SELECT event_id FROM ins`,
      [projectId, eventIds],
    );
    return new Set(rows.map((r) => r.event_id));
  }
}
