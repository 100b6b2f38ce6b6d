import type { EventAccepted } from '@meld/contracts';

/** One row of ClickHouse `events` (JSONEachRow; DateTime as unix seconds, see libs/clickhouse quirks). */
export interface EventRow {
  project_id: string;
  data_source_id: string;
  user_id: string;
  event_id: string;
  event_type: string;
  event_date: number;
  received_at: number;
  param_keys: string[];
  param_values: string[];
}

const seconds = (iso: string): number => Math.floor(Date.parse(iso) / 1000);

/** Parameters become parallel arrays of names and JSON-encoded values (sorted by name: one form per event). */
export function toEventRow(e: EventAccepted): EventRow {
  const keys = Object.keys(e.parameters)
    .filter((k) => e.parameters[k] !== undefined)
    .sort();
  return {
    project_id: e.projectId,
    data_source_id: e.dataSourceId,
    user_id: e.userId,
    event_id: e.eventId,
    event_type: e.eventType,
    event_date: Math.max(0, seconds(e.eventDate)),
    received_at: Math.max(0, seconds(e.receivedAt)),
    param_keys: keys,
    param_values: keys.map((k) => JSON.stringify(e.parameters[k])),
  };
}
