import { type AttributeType, SYSTEM_EVENT_TYPES } from '@meld/contracts';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { DATA_SOURCE } from '../db.module';

/** A project's catalogue as an audience filter checks it (structurally @meld/filters' FilterCatalogue). */
export interface FilterCatalogueRows {
  attributes: Array<{ uid: string; type: AttributeType; multivalue: boolean; slot: number | null }>;
  eventTypes: Array<{ uid: string; parameters: Array<{ uid: string; dataType: string; multiValue: number }> }>;
}

/** What an audience filter is checked against (a count, a segment's create, update and count, a coverage probe): two queries per project. */
@Injectable()
export class FilterCatalogueRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  /** Every attribute (internal and disabled ones too: their stored values can be filtered) and every event type with its parameters, Meld's own (`_sms_…`, ADR 0157) included. */
  async catalogue(projectId: string): Promise<FilterCatalogueRows> {
    const [attributes, parameters]: [Array<{ uid: string; type: AttributeType; multivalue: boolean; slot: number | null }>, Array<{ event_type: string; uid: string | null; data_type: string | null; multi_value: number | null }>] =
      await Promise.all([
        this.ds.query(`SELECT uid, type, multivalue, slot FROM attributes WHERE project_id = $1`, [projectId]),
        this.ds.query(
          `SELECT t.uid AS event_type, p.parameter AS uid, p.data_type, p.multi_value
             FROM event_types t LEFT JOIN event_parameters p ON p.event_type_id = t.id
            WHERE t.project_id = $1`,
          [projectId],
        ),
      ]);
    const eventTypes = new Map<string, Array<{ uid: string; dataType: string; multiValue: number }>>(
      SYSTEM_EVENT_TYPES.map((t) => [t.uid, t.parameters.map((p) => ({ uid: p.parameter, dataType: p.dataType, multiValue: 1 }))]),
    );
    for (const p of parameters) {
      const list = eventTypes.get(p.event_type) ?? [];
      if (p.uid !== null) list.push({ uid: p.uid, dataType: p.data_type ?? 'string', multiValue: p.multi_value ?? 1 });
      eventTypes.set(p.event_type, list);
    }
    return { attributes, eventTypes: [...eventTypes].map(([uid, params]) => ({ uid, parameters: params })) };
  }
}
