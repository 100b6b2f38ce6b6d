/**
 * A small audience "world" for the audience filter tests: contacts with attributes, source
 * contacts mapped to them, and events. `seedWorld` writes it to ClickHouse the way the probes
 * sinks do (the encoding contract of migrations 0003 and 0005 in the collapsing snapshot of 0006,
 * events as apps/probes event-row.ts), together with noise every correct read must ignore: older
 * snapshot versions and their cancellations, tombstones, superseded memberships and duplicated
 * events.
 */
import type { ClickHouse } from '@meld/clickhouse';
import { CollapsingHistory } from '@meld/testing';
import { slotValues, type FilterCatalogue } from '../../src/audience';

export type Scalar = string | number | boolean;

export interface WorldContact {
  id: string;
  /** Attribute uid → value (a list for multivalue attributes); dates as ISO strings. */
  attributes: Record<string, Scalar | Scalar[]>;
}

export interface WorldSource {
  ds: string;
  user: string;
  /** Current audience contact; null: the source contact was deleted. */
  aid: string | null;
}

export interface WorldEvent {
  id: string;
  ds: string;
  user: string;
  type: string;
  /** Unix seconds. */
  date: number;
  params: Record<string, unknown>;
}

export interface World {
  contacts: WorldContact[];
  /** Contacts deleted since (tombstones): never counted. */
  deletedContacts?: WorldContact[];
  sources: WorldSource[];
  events: WorldEvent[];
}

const seconds = (iso: string): number => Math.floor(Date.parse(iso) / 1000);

/** One audience snapshot row per the encoding contract (migrations 0003 and 0005: arrays and slot columns). */
export function contactRow(projectId: string, c: WorldContact, catalogue: FilterCatalogue, version: number, deleted = 0) {
  const types = new Map(catalogue.attributes.map((a) => [a.uid, a.type]));
  const row = { project_id: projectId, audience_id: c.id, version: String(version), deleted, str_keys: [] as string[], str_values: [] as string[], num_keys: [] as string[], num_values: [] as number[], channels: [] as string[], updated_at: 1_700_000_000 };
  for (const [key, value] of Object.entries(c.attributes)) {
    for (const v of Array.isArray(value) ? value : [value]) {
      const type = types.get(key) ?? 'string';
      if (type === 'string' || type === 'email' || type === 'phone') {
        row.str_keys.push(key);
        row.str_values.push(String(v));
      } else {
        row.num_keys.push(key);
        row.num_values.push(type === 'boolean' ? (v ? 1 : 0) : type === 'number' ? Number(v) : seconds(String(v)));
      }
    }
  }
  return { ...row, ...slotValues(row, catalogue.attributes) };
}

export function eventRow(projectId: string, e: WorldEvent) {
  const keys = Object.keys(e.params)
    .filter((k) => e.params[k] !== undefined)
    .sort();
  return {
    project_id: projectId,
    data_source_id: e.ds,
    user_id: e.user,
    event_id: e.id,
    event_type: e.type,
    event_date: e.date,
    received_at: e.date,
    param_keys: keys,
    param_values: keys.map((k) => JSON.stringify(e.params[k])),
  };
}

/**
 * Writes worlds, each under its project id, with noise: stale versions, tombstones, old
 * memberships, duplicate events. Many worlds share each insert (few parts for the test tables).
 */
export async function seedWorlds(ch: ClickHouse, worlds: ReadonlyArray<{ projectId: string; world: World }>, catalogue: FilterCatalogue): Promise<void> {
  const stale = worlds.flatMap(({ projectId, world }) => [
    // An older version with other values: only the newer one may match.
    ...world.contacts.map((c) => contactRow(projectId, { id: c.id, attributes: { city: 'stale-city', score: -999, vip: true } }, catalogue, 1)),
    ...(world.deletedContacts ?? []).map((c) => contactRow(projectId, c, catalogue, 1)),
  ]);
  const current = worlds.flatMap(({ projectId, world }) => [
    ...world.contacts.map((c) => contactRow(projectId, c, catalogue, 2)),
    ...(world.deletedContacts ?? []).map((c) => contactRow(projectId, c, catalogue, 2, 1)),
  ]);
  const membership = (version: string, current: boolean) =>
    worlds.flatMap(({ projectId, world }) =>
      world.sources.map((s) => ({
        project_id: projectId,
        data_source_id: s.ds,
        user_id: s.user,
        // Every source contact first belonged to a contact that no longer holds it; a deleted one
        // still names a live contact in its tombstone row, which must not count for it.
        audience_id: !current ? 'former-owner' : (s.aid ?? world.contacts[0]?.id ?? 'former-owner'),
        version,
        deleted: current && s.aid === null ? 1 : 0,
      })),
    );
  const events = worlds.flatMap(({ projectId, world }) => world.events.map((e) => eventRow(projectId, e)));
  const history = new CollapsingHistory();
  // Separate inserts make separate parts, so the collapsing merges may not have happened at read.
  for (const [table, rows] of [
    ['audience_snapshot', history.rows(stale)],
    ['audience_snapshot', history.rows(current)],
    ['audience_membership', membership('10', false)],
    ['audience_membership', membership('20', true)],
    ['events', events],
    // Redelivered events (same ids) must not count twice.
    ['events', events.filter((_, i) => i % 3 === 0)],
  ] as Array<[string, readonly object[]]>) {
    if (rows.length) await ch.insert(table, rows);
  }
}

export const seedWorld = (ch: ClickHouse, projectId: string, world: World, catalogue: FilterCatalogue): Promise<void> => seedWorlds(ch, [{ projectId, world }], catalogue);
