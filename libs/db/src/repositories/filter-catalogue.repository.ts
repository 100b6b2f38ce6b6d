import { type AttributeType, EVENTS_LOOK_BACK_DAYS, type Plan, SYSTEM_EVENT_TYPES } from '@meld/contracts';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { DATA_SOURCE } from '../db.module';

/** A project's catalogue as an audience filter checks it (structurally @meld/filters' FilterCatalogue). */
export interface FilterCatalogueRows {
  attributes: Array<{ uid: string; type: AttributeType; multivalue: boolean; slot: number | null }>;
  /** `keptDays`: the plan's look-back, or the type's `retentionDays` when shorter: what retention keeps (ADR 0168) and a filter counts (ADR 0060). */
  eventTypes: Array<{ uid: string; parameters: Array<{ uid: string; dataType: string; multiValue: number }>; keptDays: number }>;
}

/** What an audience filter is checked against (a count, a segment's create, update and count, a coverage probe): three queries per project. */
@Injectable()
export class FilterCatalogueRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  /** Every attribute (internal and disabled ones too: their stored values can be filtered) and every event type with its parameters, Meld's own (`_sms_…`, ADR 0157) included. */
  async catalogue(projectId: string): Promise<FilterCatalogueRows> {
    const [attributes, parameters, [project]]: [
      Array<{ uid: string; type: AttributeType; multivalue: boolean; slot: number | null }>,
      Array<{ event_type: string; retention_days: number | null; uid: string | null; data_type: string | null; multi_value: number | null }>,
      Array<{ plan: Plan | null }>,
    ] = await Promise.all([
      this.ds.query(`SELECT uid, type, multivalue, slot FROM attributes WHERE project_id = $1`, [projectId]),
      this.ds.query(
        `SELECT t.uid AS event_type, t.retention_days, p.parameter AS uid, p.data_type, p.multi_value
           FROM event_types t LEFT JOIN event_parameters p ON p.event_type_id = t.id
          WHERE t.project_id = $1`,
        [projectId],
      ),
      this.ds.query(`SELECT o.plan FROM projects p JOIN organizations o ON o.id = p.organization_id WHERE p.id = $1`, [projectId]),
    ]);
    // No plan known: the smallest look-back, as the event reads take it.
    const lookBack = EVENTS_LOOK_BACK_DAYS[project?.plan ?? 's'] ?? EVENTS_LOOK_BACK_DAYS.s;
    const eventTypes = new Map<string, { parameters: Array<{ uid: string; dataType: string; multiValue: number }>; keptDays: number }>(
      SYSTEM_EVENT_TYPES.map((t) => [t.uid, { parameters: t.parameters.map((p) => ({ uid: p.parameter, dataType: p.dataType, multiValue: 1 })), keptDays: lookBack }]),
    );
    for (const p of parameters) {
      const type = eventTypes.get(p.event_type) ?? { parameters: [], keptDays: p.retention_days !== null && p.retention_days < lookBack ? p.retention_days : lookBack };
      if (p.uid !== null) type.parameters.push({ uid: p.uid, dataType: p.data_type ?? 'string', multiValue: p.multi_value ?? 1 });
      eventTypes.set(p.event_type, type);
    }
    return { attributes, eventTypes: [...eventTypes].map(([uid, type]) => ({ uid, ...type })) };
  }
}
