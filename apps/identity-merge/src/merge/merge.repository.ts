import { randomUUID } from 'node:crypto';
import { keys as messageKeys, type AudienceChange } from '@meld/contracts';
import { outboxTrace } from '@meld/db';
import type { DataSource, EntityManager } from 'typeorm';
import { applyRestrictiveConsent, consentChanges, recordConsentChanges, type ConsentChange } from './merge-consent';
import { contactRef, type AudienceContact, type DataSourceInfo, type MergeOptions } from './merge-core';
import { keyString, type MergeKey } from './merge-keys';
import { planMerge, type MergePlan } from './merge-step';
import { PgMergeStateReader, REFS, refArrays, splitRef } from './pg-merge-state';

/** A source contact as the consumer names it. */
export interface ContactId {
  projectId: string;
  dataSourceId: string;
  userId: string;
}

export interface MergeStepResult {
  /** False when the step found nothing to do (replay, stale message). */
  changed: boolean;
  messages: number;
  capEvents: Array<{ contact: string; into: string; reason: string }>;
}

const NOTHING: MergeStepResult = { changed: false, messages: 0, capEvents: [] };

interface StoredAudience {
  id: string;
  attributes: Record<string, unknown>;
  lineage: Record<string, string>;
  datasources: string[];
  ds_contact_ids: string[];
  version: string;
}

/** JSON with object keys sorted: jsonb does not keep key order, so compare this way. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

function sameContent(a: AudienceContact, b: StoredAudience): boolean {
  return canonicalJson([a.attributes, a.lineage, a.dataSources, a.dsContactIds]) === canonicalJson([b.attributes, b.lineage, b.datasources, b.ds_contact_ids]);
}

/**
 * The project's merge settings and data sources, and the step's time (`at` of its messages):
 * Postgres' clock read after the project's merge lock is taken. Steps of a project commit in
 * lock order, so their times never go back whichever replica ran them; the ClickHouse sinks
 * order rows by it (probes audience-contact-row.ts). The app's clock read before the lock
 * could give a later step an earlier time.
 */
async function projectSettings(
  em: EntityManager,
  projectId: string,
): Promise<{ mergingAttributes: string[]; locale: string; sources: Map<string, DataSourceInfo>; at: string } | undefined> {
  const [row]: Array<{ merging_attributes: string[]; locale: string; sources: Array<{ id: string; priority: number; connector: string }>; at: Date }> = await em.query(
    `SELECT p.merging_attributes, p.locale, clock_timestamp() AS at,
            (SELECT COALESCE(json_agg(json_build_object('id', d.id, 'priority', d.priority, 'connector', d.connector)), '[]') FROM data_sources d WHERE d.project_id = p.id) AS sources
       FROM projects p WHERE p.id = $1`,
    [projectId],
  );
  if (!row) return undefined;
  const sources = new Map<string, DataSourceInfo>(row.sources.map((s) => [s.id, { id: s.id, priority: s.priority, isIngest: s.connector === 'api' }]));
  return { mergingAttributes: row.merging_attributes, locale: row.locale, sources, at: new Date(row.at).toISOString() };
}

/** Previous members of each audience id the step touched (every one of them is in the region). */
function previousMembers(plan: MergePlan): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [ref, id] of plan.previous) out.set(id, [...(out.get(id) ?? []), ref]);
  return out;
}

/**
 * Brings `merge_keys` and `audience_members` of every ref the step looked at to the plan,
 * writing only the difference with what the step loaded (the project's merge lock keeps it
 * current): most refs of a region beyond the changed contacts keep their keys and member row.
 * The applied version is the one read with the contact's attributes (PgMergeStateReader).
 */
async function writeMembers(em: EntityManager, projectId: string, plan: MergePlan, reader: PgMergeStateReader): Promise<void> {
  const gone: Array<{ ref: string; key: MergeKey }> = [];
  const added: Array<{ ref: string; key: MergeKey }> = [];
  for (const ref of plan.refs) {
    const before = reader.stateOf(ref)?.keys ?? [];
    const after = plan.keys.get(ref) ?? [];
    const [was, is] = [new Set(before.map(keyString)), new Set(after.map(keyString))];
    for (const key of before) if (!is.has(keyString(key))) gone.push({ ref, key });
    for (const key of after) if (!was.has(keyString(key))) added.push({ ref, key });
  }
  const keyColumns = (rows: typeof gone) => {
    const parts = rows.map((r) => ({ ...splitRef(r.ref), ...r.key }));
    return [parts.map((k) => k.attribute), parts.map((k) => k.value), parts.map((k) => k.dataSourceId), parts.map((k) => k.userId)];
  };
  if (gone.length) {
    await em.query(
      `DELETE FROM merge_keys k USING unnest($2::text[], $3::text[], $4::uuid[], $5::text[]) AS g(attribute, value, data_source_id, user_id)
        WHERE k.project_id = $1 AND k.attribute = g.attribute AND k.value = g.value AND k.data_source_id = g.data_source_id AND k.user_id = g.user_id`,
      [projectId, ...keyColumns(gone)],
    );
  }
  if (added.length) {
    await em.query(`INSERT INTO merge_keys (project_id, attribute, value, data_source_id, user_id) SELECT $1, * FROM unnest($2::text[], $3::text[], $4::uuid[], $5::text[]) ON CONFLICT DO NOTHING`, [
      projectId,
      ...keyColumns(added),
    ]);
  }
  const liveRefs = new Set(plan.contacts.map(contactRef));
  const goneMembers = plan.refs.filter((r) => !liveRefs.has(r) && reader.stateOf(r)?.audienceId);
  if (goneMembers.length) {
    await em.query(`DELETE FROM audience_members m USING ${REFS} WHERE m.project_id = $1 AND m.data_source_id = r.data_source_id AND m.user_id = r.user_id`, [
      projectId,
      ...refArrays(goneMembers),
    ]);
  }
  const c = plan.contacts.filter((x) => {
    const s = reader.stateOf(contactRef(x));
    return !s || s.audienceId !== plan.result.assignment.get(contactRef(x)) || s.applied !== s.version || s.seq !== x.seq;
  });
  if (!c.length) return;
  await em.query(
    `INSERT INTO audience_members (project_id, data_source_id, user_id, audience_id, seq, applied_version)
     SELECT $1, * FROM unnest($2::uuid[], $3::text[], $4::uuid[], $5::bigint[], $6::bigint[])
     ON CONFLICT (project_id, data_source_id, user_id)
     DO UPDATE SET audience_id = EXCLUDED.audience_id, applied_version = EXCLUDED.applied_version`,
    [
      projectId,
      c.map((x) => x.dataSourceId),
      c.map((x) => x.userId),
      c.map((x) => plan.result.assignment.get(contactRef(x))),
      c.map((x) => x.seq),
      c.map((x) => reader.stateOf(contactRef(x))?.version ?? '0'),
    ],
  );
}

/** Upserts the audience contacts whose content changed, in one statement. */
async function upsertAudiences(em: EntityManager, projectId: string, rows: ReadonlyArray<{ audience: AudienceContact; version: number }>): Promise<void> {
  if (!rows.length) return;
  // One JSON parameter rather than jsonb[] ones: pg escapes every element of an array parameter
  // in JavaScript (quote by quote), JSON.stringify of the whole is native.
  await em.query(
    `INSERT INTO audience_contacts (project_id, id, attributes, lineage, datasources, ds_contact_ids, version, updated_at)
     SELECT $1, t.id, t.attributes, t.lineage, t.datasources, t.ds_contact_ids, t.version, now()
       FROM jsonb_to_recordset($2::jsonb) AS t(id uuid, attributes jsonb, lineage jsonb, datasources jsonb, ds_contact_ids jsonb, version bigint)
     ON CONFLICT (project_id, id) DO UPDATE SET attributes = EXCLUDED.attributes, lineage = EXCLUDED.lineage, datasources = EXCLUDED.datasources,
       ds_contact_ids = EXCLUDED.ds_contact_ids, version = EXCLUDED.version, updated_at = now()`,
    [
      projectId,
      JSON.stringify(
        rows.map((r) => ({
          id: r.audience.id,
          attributes: r.audience.attributes,
          lineage: r.audience.lineage,
          datasources: r.audience.dataSources,
          ds_contact_ids: r.audience.dsContactIds,
          version: r.version,
        })),
      ),
    ],
  );
}

/**
 * Absorbed ids leave `audience_contacts` and resolve to their survivor through
 * `audience_aliases`; earlier aliases of an absorbed id follow it, so every old id resolves in
 * one hop. A survivor is never absorbed in the same step, so one statement per table suffices.
 */
async function recordAbsorbed(em: EntityManager, projectId: string, absorbed: ReadonlyMap<string, string>): Promise<void> {
  if (!absorbed.size) return;
  const [ids, survivors] = [[...absorbed.keys()], [...absorbed.values()]];
  await em.query(`DELETE FROM audience_contacts WHERE project_id = $1 AND id = ANY($2::uuid[])`, [projectId, ids]);
  await em.query(
    `UPDATE audience_aliases a SET survivor_id = x.survivor FROM unnest($2::uuid[], $3::uuid[]) AS x(absorbed, survivor)
      WHERE a.project_id = $1 AND a.survivor_id = x.absorbed`,
    [projectId, ids, survivors],
  );
  await em.query(
    `INSERT INTO audience_aliases (project_id, absorbed_id, survivor_id) SELECT $1, * FROM unnest($2::uuid[], $3::uuid[])
     ON CONFLICT (project_id, absorbed_id) DO UPDATE SET survivor_id = EXCLUDED.survivor_id`,
    [projectId, ids, survivors],
  );
}

/**
 * The data source a cleared consent of each audience contact is attributed to: that of the
 * first changed contact (in message order) that belongs or belonged to it; in a one-contact
 * step, that contact's.
 */
function stepSources(changed: readonly string[], plan: MergePlan): { of: (audienceId: string) => string } {
  const byAudience = new Map<string, string>();
  for (const ref of changed) {
    for (const id of [plan.result.assignment.get(ref), plan.previous.get(ref)]) {
      if (id !== undefined && !byAudience.has(id)) byAudience.set(id, splitRef(ref).dataSourceId);
    }
  }
  const fallback = splitRef(changed[0]).dataSourceId;
  return { of: (id) => byAudience.get(id) ?? fallback };
}

export interface MergeRepositoryOptions {
  /** Overrides of the project's merge settings (cap, junk values). */
  cap?: number;
  junkValues?: readonly string[];
  /** Where cap events are reported (the consumer logs them). */
  onCap?: (projectId: string, event: { contact: string; into: string; reason: string }) => void;
}

/**
 * Merge steps. A step merges any number of changed source contacts of one project in one
 * transaction holding the project's merge lock (`pg_advisory_xact_lock`; a single lock, so
 * steps of replicas cannot deadlock on each other), so two steps of one project never
 * interleave and two writes bridging the same pair end in one audience contact. Everything is
 * re-read under the lock; a step that finds nothing changed writes nothing (replays are
 * no-ops). Its region is the union of the contacts' regions, closed under shared keys like a
 * one-contact step's, so merging it at once equals merging the contacts one by one (up to
 * which new contact counts as older). Writes are set-based (one statement per table); the
 * `meld.audience.v1` messages go to `audience_outbox` in the same transaction.
 */
export class MergeRepository {
  constructor(
    private readonly db: DataSource,
    private readonly options: MergeRepositoryOptions = {},
  ) {}

  /** One contact: a step of its own (`now`, tests: the step time; otherwise Postgres' clock read under the lock, see projectSettings). */
  mergeContact(contact: ContactId, now?: Date): Promise<MergeStepResult> {
    return this.mergeContacts(contact.projectId, [contact], now);
  }

  /**
   * One step for the changed contacts of a project (a consumer batch). New contacts take their
   * merge seq in the order given.
   */
  async mergeContacts(projectId: string, contacts: ReadonlyArray<{ dataSourceId: string; userId: string }>, now?: Date): Promise<MergeStepResult> {
    const named = [...new Set(contacts.map(contactRef))];
    if (!named.length) return NOTHING;
    return this.db.transaction(async (em) => {
      await em.query(`SELECT pg_advisory_xact_lock(hashtextextended('meld.merge/' || $1::text, 0))`, [projectId]);
      const project = await projectSettings(em, projectId);
      if (!project) return NOTHING;
      const reader = new PgMergeStateReader(em, projectId);
      const changed = await reader.pending(named);
      if (!changed.length) return NOTHING;
      const { sources } = project;
      const options: MergeOptions = { mergingAttributes: project.mergingAttributes, locale: project.locale, cap: this.options.cap, junkValues: this.options.junkValues };
      const plan = await planMerge(reader, changed, sources, options, () => randomUUID());
      applyRestrictiveConsent(plan.result.audiences, plan.contacts, sources);
      for (const e of plan.result.capEvents) this.options.onCap?.(projectId, e);

      const previousIds = [...new Set(plan.previous.values())];
      const stored: StoredAudience[] = previousIds.length
        ? await em.query(`SELECT id, attributes, lineage, datasources, ds_contact_ids, version FROM audience_contacts WHERE project_id = $1 AND id = ANY($2::uuid[])`, [
            projectId,
            previousIds,
          ])
        : [];
      const storedById = new Map(stored.map((s) => [s.id, s]));
      const lastVersion = (id: string) => Number(storedById.get(id)?.version ?? 0);
      const at = now ? now.toISOString() : project.at;
      const before = previousMembers(plan);
      /** Members an id had before the step and no longer has (for consumers of the membership). */
      const removedFrom = (id: string) => (before.get(id) ?? []).filter((r) => plan.result.assignment.get(r) !== id).sort();

      await writeMembers(em, projectId, plan, reader);

      // Absorbed ids first: each on its own key, so its order against the others is irrelevant.
      // Its tombstone lets one-row-per-id consumers (the ClickHouse snapshot table) drop it
      // without understanding `merge`; the survivor's snapshot of the same step lists its
      // members, whose live membership rows beat these removals (same `at`, live wins).
      const absorbedIds = [...plan.result.absorbed.keys()].sort();
      const messages: AudienceChange[] = absorbedIds.map((id) => ({
        schemaVersion: 1,
        kind: 'tombstone',
        projectId,
        audienceId: id,
        version: lastVersion(id) + 1,
        at,
        removedDsContactIds: removedFrom(id),
      }));

      // Audience contacts: write and announce only what changed.
      const versions = new Map<string, number>();
      const writes: Array<{ audience: AudienceContact; version: number }> = [];
      const consent: ConsentChange[] = [];
      const stepSource = stepSources(changed, plan);
      for (const a of plan.result.audiences) {
        const old = storedById.get(a.id);
        if (old && sameContent(a, old)) {
          versions.set(a.id, Number(old.version));
          continue;
        }
        const version = old ? Number(old.version) + 1 : 1;
        versions.set(a.id, version);
        writes.push({ audience: a, version });
        messages.push({
          schemaVersion: 1,
          kind: 'snapshot',
          projectId,
          audienceId: a.id,
          version,
          at,
          attributes: a.attributes,
          dataSources: a.dataSources,
          dsContactIds: a.dsContactIds,
          removedDsContactIds: removedFrom(a.id),
        });
        consent.push(...consentChanges(a, old, plan.contacts, stepSource.of(a.id)));
      }
      await upsertAudiences(em, projectId, writes);
      await recordConsentChanges(em, projectId, consent, at);
      await recordAbsorbed(em, projectId, plan.result.absorbed);
      const absorbedBySurvivor = new Map<string, string[]>();
      for (const id of absorbedIds) {
        const survivor = plan.result.absorbed.get(id)!;
        absorbedBySurvivor.set(survivor, [...(absorbedBySurvivor.get(survivor) ?? []), id]);
      }
      for (const [survivor, ids] of absorbedBySurvivor) {
        messages.push({ schemaVersion: 1, kind: 'merge', projectId, audienceId: survivor, version: versions.get(survivor) ?? 1, at, absorbedIds: ids });
      }
      if (plan.result.removed.length) {
        await em.query(`DELETE FROM audience_contacts WHERE project_id = $1 AND id = ANY($2::uuid[])`, [projectId, plan.result.removed]);
        for (const id of plan.result.removed) {
          messages.push({ schemaVersion: 1, kind: 'tombstone', projectId, audienceId: id, version: lastVersion(id) + 1, at, removedDsContactIds: removedFrom(id) });
        }
      }
      if (messages.length) {
        await em.query(`INSERT INTO audience_outbox (key, value, trace) SELECT m.e->>'key', m.e->'value', $2::jsonb FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS m(e, n) ORDER BY m.n`, [
          JSON.stringify(messages.map((m) => ({ key: messageKeys.audienceContact(projectId, m.audienceId), value: m }))),
          outboxTrace(),
        ]);
      }
      return { changed: messages.length > 0, messages: messages.length, capEvents: plan.result.capEvents };
    });
  }

  /** The audience contact an id names now: itself, or the survivor that absorbed it. */
  async resolve(projectId: string, audienceId: string): Promise<string | null> {
    const rows: Array<{ id: string }> = await this.db.query(
      `SELECT id FROM audience_contacts WHERE project_id = $1 AND id = $2
       UNION ALL
       SELECT c.id FROM audience_aliases a JOIN audience_contacts c ON c.project_id = a.project_id AND c.id = a.survivor_id
        WHERE a.project_id = $1 AND a.absorbed_id = $2
       LIMIT 1`,
      [projectId, audienceId],
    );
    return rows[0]?.id ?? null;
  }
}
