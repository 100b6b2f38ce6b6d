import { randomUUID } from 'node:crypto';
import { keys as messageKeys, type AudienceChange } from '@meld/contracts';
import type { DataSource, EntityManager } from 'typeorm';
import { contactRef, type AudienceContact, type DataSourceInfo, type MergeOptions, type SourceContact } from './merge-core';
import type { MergeKey } from './merge-keys';
import { planMerge, type MergeStateReader } from './merge-step';

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

/** `<dataSourceId>/<userId>` → parts; data source ids are uuids, so the first `/` splits. */
function splitRef(ref: string): { dataSourceId: string; userId: string } {
  const i = ref.indexOf('/');
  return { dataSourceId: ref.slice(0, i), userId: ref.slice(i + 1) };
}

function refArrays(refs: readonly string[]): [string[], string[]] {
  const parts = refs.map(splitRef);
  return [parts.map((p) => p.dataSourceId), parts.map((p) => p.userId)];
}

const REFS = `unnest($2::uuid[], $3::text[]) AS r(data_source_id, user_id)`;

/** Reads the merge state of one project inside the step's transaction. */
class PgMergeStateReader implements MergeStateReader {
  constructor(
    private readonly em: EntityManager,
    private readonly projectId: string,
  ) {}

  async liveContacts(refs: readonly string[]): Promise<SourceContact[]> {
    if (!refs.length) return [];
    const rows: Array<{ data_source_id: string; user_id: string; attributes: SourceContact['attributes']; attribute_at: Record<string, string>; seq: string | null }> =
      await this.em.query(
        `SELECT s.data_source_id, s.user_id, s.attributes, s.attribute_at, m.seq
           FROM ${REFS}
           JOIN source_contacts s ON s.project_id = $1 AND s.data_source_id = r.data_source_id AND s.user_id = r.user_id AND s.deleted_at IS NULL
           LEFT JOIN audience_members m ON m.project_id = $1 AND m.data_source_id = r.data_source_id AND m.user_id = r.user_id
          ORDER BY s.data_source_id, s.user_id`,
        [this.projectId, ...refArrays(refs)],
      );
    const out: SourceContact[] = [];
    for (const row of rows) {
      // A contact the merge has not seen yet is the youngest: it takes the next seq now
      // (in ref order), and keeps it when its member row is written.
      const seq = row.seq ?? (await this.em.query(`SELECT nextval(pg_get_serial_sequence('audience_members', 'seq')) AS seq`))[0].seq;
      out.push({ dataSourceId: row.data_source_id, userId: row.user_id, attributes: row.attributes, attributeAt: row.attribute_at, seq: Number(seq) });
    }
    return out;
  }

  async refsWithKeys(keys: readonly MergeKey[]): Promise<string[]> {
    const rows: Array<{ data_source_id: string; user_id: string }> = await this.em.query(
      `SELECT DISTINCT k.data_source_id, k.user_id FROM unnest($2::text[], $3::text[]) AS q(attribute, value)
         JOIN merge_keys k ON k.project_id = $1 AND k.attribute = q.attribute AND k.value = q.value`,
      [this.projectId, keys.map((k) => k.attribute), keys.map((k) => k.value)],
    );
    return rows.map((r) => contactRef({ dataSourceId: r.data_source_id, userId: r.user_id }));
  }

  async keysOfRefs(refs: readonly string[]): Promise<MergeKey[]> {
    if (!refs.length) return [];
    return this.em.query(
      `SELECT k.attribute, k.value FROM ${REFS} JOIN merge_keys k ON k.project_id = $1 AND k.data_source_id = r.data_source_id AND k.user_id = r.user_id`,
      [this.projectId, ...refArrays(refs)],
    );
  }

  async assignments(refs: readonly string[]): Promise<Map<string, string>> {
    if (!refs.length) return new Map();
    const rows: Array<{ data_source_id: string; user_id: string; audience_id: string }> = await this.em.query(
      `SELECT m.data_source_id, m.user_id, m.audience_id FROM ${REFS}
         JOIN audience_members m ON m.project_id = $1 AND m.data_source_id = r.data_source_id AND m.user_id = r.user_id`,
      [this.projectId, ...refArrays(refs)],
    );
    return new Map(rows.map((r) => [contactRef({ dataSourceId: r.data_source_id, userId: r.user_id }), r.audience_id]));
  }

  async membersOf(audienceIds: readonly string[]): Promise<string[]> {
    const rows: Array<{ data_source_id: string; user_id: string }> = await this.em.query(
      `SELECT data_source_id, user_id FROM audience_members WHERE project_id = $1 AND audience_id = ANY($2::uuid[])`,
      [this.projectId, audienceIds],
    );
    return rows.map((r) => contactRef({ dataSourceId: r.data_source_id, userId: r.user_id }));
  }
}

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

export interface MergeRepositoryOptions {
  /** Overrides of the project's merge settings (cap, junk values). */
  cap?: number;
  junkValues?: readonly string[];
  /** Where cap events are reported (the consumer logs them). */
  onCap?: (projectId: string, event: { contact: string; into: string; reason: string }) => void;
}

/**
 * One merge step per changed source contact: a transaction holding the project's merge
 * lock (`pg_advisory_xact_lock`), so two steps of one project never interleave and two
 * writes bridging the same pair end in one audience contact. Everything is re-read under
 * the lock; a step that finds nothing changed writes nothing (replays are no-ops). The
 * `meld.audience.v1` messages go to `audience_outbox` in the same transaction.
 */
export class MergeRepository {
  constructor(
    private readonly db: DataSource,
    private readonly options: MergeRepositoryOptions = {},
  ) {}

  async mergeContact(contact: ContactId, now: Date = new Date()): Promise<MergeStepResult> {
    return this.db.transaction(async (em) => {
      const { projectId } = contact;
      await em.query(`SELECT pg_advisory_xact_lock(hashtextextended('meld.merge/' || $1::text, 0))`, [projectId]);
      const [project]: Array<{ merging_attributes: string[]; locale: string }> = await em.query(
        `SELECT merging_attributes, locale FROM projects WHERE id = $1`,
        [projectId],
      );
      if (!project) return { changed: false, messages: 0, capEvents: [] };
      const ref = contactRef(contact);
      // Fast path for replays: the applied version is already the row's version.
      const [state]: Array<{ version: string; deleted: boolean; applied: string | null }> = await em.query(
        `SELECT s.version, s.deleted_at IS NOT NULL AS deleted, m.applied_version AS applied
           FROM source_contacts s
           LEFT JOIN audience_members m ON m.project_id = s.project_id AND m.data_source_id = s.data_source_id AND m.user_id = s.user_id
          WHERE s.project_id = $1 AND s.data_source_id = $2 AND s.user_id = $3`,
        [projectId, contact.dataSourceId, contact.userId],
      );
      if (state && !state.deleted && state.applied !== null && BigInt(state.applied) >= BigInt(state.version)) {
        return { changed: false, messages: 0, capEvents: [] };
      }
      const sourceRows: Array<{ id: string; priority: number; connector: string }> = await em.query(
        `SELECT id, priority, connector FROM data_sources WHERE project_id = $1`,
        [projectId],
      );
      const sources = new Map<string, DataSourceInfo>(sourceRows.map((s) => [s.id, { id: s.id, priority: s.priority, isIngest: s.connector === 'api' }]));
      const options: MergeOptions = { mergingAttributes: project.merging_attributes, locale: project.locale, cap: this.options.cap, junkValues: this.options.junkValues };
      const plan = await planMerge(new PgMergeStateReader(em, projectId), [ref], sources, options, () => randomUUID());
      for (const e of plan.result.capEvents) this.options.onCap?.(projectId, e);

      const previousIds = [...new Set(plan.previous.values())];
      const stored: StoredAudience[] = previousIds.length
        ? await em.query(`SELECT id, attributes, lineage, datasources, ds_contact_ids, version FROM audience_contacts WHERE project_id = $1 AND id = ANY($2::uuid[])`, [
            projectId,
            previousIds,
          ])
        : [];
      const storedById = new Map(stored.map((s) => [s.id, s]));
      const at = now.toISOString();
      const messages: AudienceChange[] = [];

      // Member rows and merge keys of every ref the step looked at are rewritten.
      const [dsIds, userIds] = refArrays(plan.refs);
      await em.query(`DELETE FROM merge_keys k USING ${REFS} WHERE k.project_id = $1 AND k.data_source_id = r.data_source_id AND k.user_id = r.user_id`, [projectId, dsIds, userIds]);
      const keyRows = [...plan.keys].flatMap(([r, ks]) => ks.map((k) => ({ ...splitRef(r), ...k })));
      if (keyRows.length) {
        await em.query(
          `INSERT INTO merge_keys (project_id, attribute, value, data_source_id, user_id)
           SELECT $1, * FROM unnest($2::text[], $3::text[], $4::uuid[], $5::text[]) ON CONFLICT DO NOTHING`,
          [projectId, keyRows.map((k) => k.attribute), keyRows.map((k) => k.value), keyRows.map((k) => k.dataSourceId), keyRows.map((k) => k.userId)],
        );
      }
      const liveRefs = new Set(plan.contacts.map(contactRef));
      const goneRefs = plan.refs.filter((r) => !liveRefs.has(r));
      if (goneRefs.length) {
        await em.query(`DELETE FROM audience_members m USING ${REFS} WHERE m.project_id = $1 AND m.data_source_id = r.data_source_id AND m.user_id = r.user_id`, [
          projectId,
          ...refArrays(goneRefs),
        ]);
      }
      if (plan.contacts.length) {
        const c = plan.contacts;
        await em.query(
          `INSERT INTO audience_members (project_id, data_source_id, user_id, audience_id, seq, applied_version)
           SELECT $1, r.ds, r.u, r.a, r.seq, COALESCE(s.version, 0)
             FROM unnest($2::uuid[], $3::text[], $4::uuid[], $5::bigint[]) AS r(ds, u, a, seq)
             LEFT JOIN source_contacts s ON s.project_id = $1 AND s.data_source_id = r.ds AND s.user_id = r.u
           ON CONFLICT (project_id, data_source_id, user_id)
           DO UPDATE SET audience_id = EXCLUDED.audience_id, applied_version = EXCLUDED.applied_version`,
          [projectId, c.map((x) => x.dataSourceId), c.map((x) => x.userId), c.map((x) => plan.result.assignment.get(contactRef(x))), c.map((x) => x.seq)],
        );
      }

      // Audience contacts: write and announce only what changed.
      const versions = new Map<string, number>();
      for (const a of plan.result.audiences) {
        const old = storedById.get(a.id);
        if (old && sameContent(a, old)) {
          versions.set(a.id, Number(old.version));
          continue;
        }
        const version = old ? Number(old.version) + 1 : 1;
        versions.set(a.id, version);
        await em.query(
          `INSERT INTO audience_contacts (project_id, id, attributes, lineage, datasources, ds_contact_ids, version, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, now())
           ON CONFLICT (project_id, id) DO UPDATE SET attributes = EXCLUDED.attributes, lineage = EXCLUDED.lineage, datasources = EXCLUDED.datasources,
             ds_contact_ids = EXCLUDED.ds_contact_ids, version = EXCLUDED.version, updated_at = now()`,
          [projectId, a.id, JSON.stringify(a.attributes), JSON.stringify(a.lineage), JSON.stringify(a.dataSources), JSON.stringify(a.dsContactIds), version],
        );
        messages.push({ schemaVersion: 1, kind: 'snapshot', projectId, audienceId: a.id, version, at, attributes: a.attributes, dataSources: a.dataSources, dsContactIds: a.dsContactIds });
      }
      const absorbedBySurvivor = new Map<string, string[]>();
      for (const [absorbed, survivor] of plan.result.absorbed) {
        await em.query(`DELETE FROM audience_contacts WHERE project_id = $1 AND id = $2`, [projectId, absorbed]);
        // Earlier aliases of the absorbed id follow it, so every old id resolves in one hop.
        await em.query(`UPDATE audience_aliases SET survivor_id = $3 WHERE project_id = $1 AND survivor_id = $2`, [projectId, absorbed, survivor]);
        await em.query(
          `INSERT INTO audience_aliases (project_id, absorbed_id, survivor_id) VALUES ($1, $2, $3)
           ON CONFLICT (project_id, absorbed_id) DO UPDATE SET survivor_id = EXCLUDED.survivor_id`,
          [projectId, absorbed, survivor],
        );
        absorbedBySurvivor.set(survivor, [...(absorbedBySurvivor.get(survivor) ?? []), absorbed]);
      }
      for (const [survivor, absorbedIds] of absorbedBySurvivor) {
        messages.push({ schemaVersion: 1, kind: 'merge', projectId, audienceId: survivor, version: versions.get(survivor) ?? 1, at, absorbedIds: absorbedIds.sort() });
      }
      for (const id of plan.result.removed) {
        await em.query(`DELETE FROM audience_contacts WHERE project_id = $1 AND id = $2`, [projectId, id]);
        const version = Number(storedById.get(id)?.version ?? 0) + 1;
        messages.push({ schemaVersion: 1, kind: 'tombstone', projectId, audienceId: id, version, at });
      }
      if (messages.length) {
        await em.query(`INSERT INTO audience_outbox (key, value) SELECT * FROM unnest($1::text[], $2::jsonb[])`, [
          messages.map((m) => messageKeys.audienceContact(projectId, m.audienceId)),
          messages.map((m) => JSON.stringify(m)),
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
