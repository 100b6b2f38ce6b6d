import { type AttributeType, type AudienceChange, Outputs } from '@meld/contracts';
import { MESSAGING_CONNECTOR, OUTBOX_DEAD_LETTERS, outboxTrace } from '@meld/db';
import type { DataSource, EntityManager } from 'typeorm';
import type { ConsentChange } from './merge-consent';
import { contactRef, type AudienceContact, type DataSourceInfo } from './merge-core';
import { keyString, type MergeKey } from './merge-keys';
import type { MergePlan } from './merge-step';
import { PgMergeStateReader, REFS, refArrays, splitRef } from './pg-merge-state';

/** An audience contact as `audience_contacts` holds it. */
export interface StoredAudience {
  id: string;
  attributes: Record<string, unknown>;
  lineage: Record<string, string>;
  datasources: string[];
  ds_contact_ids: string[];
  version: string;
  /** The audience contact's `_created_at`: its first write, or earlier from a merge (ADR 0353). */
  created_at: Date;
}

/** The project's merge settings and data sources, and the step's time (see `MergeStepStore.settings`). */
export interface ProjectMergeSettings {
  mergingAttributes: string[];
  /** Catalogue type of each merging attribute (ADR 0024). */
  attributeTypes: Map<string, AttributeType>;
  locale: string;
  sources: Map<string, DataSourceInfo>;
  at: string;
}

/**
 * The I/O of merge steps. A step runs in one transaction holding the project's merge lock
 * (`pg_advisory_xact_lock`; a single lock, so steps of replicas cannot deadlock on each other),
 * so two steps of one project never interleave. Writes are set-based (one statement per table);
 * the `meld.audience.v1` messages go to `audience_outbox` in the same transaction. What a step
 * decides is the MergeContacts use case's (ADR 0226).
 */
export class MergeRepository {
  constructor(private readonly db: DataSource) {}

  /** Runs `work` in one transaction that holds the project's merge lock from its first statement. */
  inProjectStep<T>(projectId: string, work: (store: MergeStepStore) => Promise<T>): Promise<T> {
    return this.db.transaction(async (em) => {
      await em.query(`SELECT pg_advisory_xact_lock(hashtextextended('meld.merge/' || $1::text, 0))`, [projectId]);
      return work(new MergeStepStore(em, projectId));
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

/** The statements of one step of one project, inside its locked transaction. */
export class MergeStepStore {
  /** The step's view of the source contacts, member rows and keys (loaded once per ref). */
  readonly state: PgMergeStateReader;

  constructor(
    private readonly em: EntityManager,
    private readonly projectId: string,
  ) {
    this.state = new PgMergeStateReader(em, projectId);
  }

  /** The statements of a further step in the same transaction, under the same lock, with a view loaded afresh. */
  next(): MergeStepStore {
    return new MergeStepStore(this.em, this.projectId);
  }

  /**
   * The project's merge settings and data sources, and the step's time (`at` of its messages):
   * Postgres' clock read after the project's merge lock is taken. Steps of a project commit in
   * lock order, so their times never go back whichever replica ran them; the ClickHouse sinks
   * order rows by it (probes audience-contact-row.ts). The app's clock read before the lock
   * could give a later step an earlier time. Undefined when the project is gone.
   */
  async settings(): Promise<ProjectMergeSettings | undefined> {
    const [row]: Array<{ merging_attributes: string[]; locale: string; sources: Array<{ id: string; priority: number; connector: string }>; types: Array<[string, AttributeType]>; at: Date }> =
      await this.em.query(
        `SELECT p.merging_attributes, p.locale, clock_timestamp() AS at,
                (SELECT COALESCE(json_agg(json_build_object('id', d.id, 'priority', d.priority, 'connector', d.connector)), '[]') FROM data_sources d WHERE d.project_id = p.id) AS sources,
                (SELECT COALESCE(json_agg(json_build_array(a.uid, a.type)), '[]') FROM attributes a WHERE a.project_id = p.id AND a.uid = ANY(p.merging_attributes)) AS types
           FROM projects p WHERE p.id = $1`,
      [this.projectId],
    );
    if (!row) return undefined;
    const sources = new Map<string, DataSourceInfo>(row.sources.map((s) => [s.id, { id: s.id, priority: s.priority, isIngest: s.connector === 'api', links: s.connector === MESSAGING_CONNECTOR }]));
    return { mergingAttributes: row.merging_attributes, attributeTypes: new Map(row.types), locale: row.locale, sources, at: new Date(row.at).toISOString() };
  }

  /** The stored audience contacts among `ids`, by id (no statement when there is none to read). */
  async storedAudiences(ids: readonly string[]): Promise<Map<string, StoredAudience>> {
    if (!ids.length) return new Map();
    const rows: StoredAudience[] = await this.em.query(
      `SELECT id, attributes, lineage, datasources, ds_contact_ids, version, created_at FROM audience_contacts WHERE project_id = $1 AND id = ANY($2::uuid[])`,
      [this.projectId, ids],
    );
    return new Map(rows.map((s) => [s.id, s]));
  }

  /**
   * Brings `merge_keys` and `audience_members` of every ref the step looked at to the plan,
   * writing only the difference with what the step loaded (the project's merge lock keeps it
   * current): most refs of a region beyond the changed contacts keep their keys and member row.
   * The applied version is the one read with the contact's attributes (PgMergeStateReader).
   * `firstAt` is when the merge first wrote each live member (ADR 0353): a new row takes it, an
   * existing one keeps its own (a row older than the column takes it now).
   */
  async writeMembers(plan: MergePlan, firstAt: ReadonlyMap<string, string>): Promise<void> {
    const gone: Array<{ ref: string; key: MergeKey }> = [];
    const added: Array<{ ref: string; key: MergeKey }> = [];
    for (const ref of plan.refs) {
      const before = this.state.stateOf(ref)?.keys ?? [];
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
      await this.em.query(
        `DELETE FROM merge_keys k USING unnest($2::text[], $3::text[], $4::uuid[], $5::text[]) AS g(attribute, value, data_source_id, user_id)
          WHERE k.project_id = $1 AND k.attribute = g.attribute AND k.value = g.value AND k.data_source_id = g.data_source_id AND k.user_id = g.user_id`,
        [this.projectId, ...keyColumns(gone)],
      );
    }
    if (added.length) {
      await this.em.query(
        `INSERT INTO merge_keys (project_id, attribute, value, data_source_id, user_id) SELECT $1, * FROM unnest($2::text[], $3::text[], $4::uuid[], $5::text[]) ON CONFLICT DO NOTHING`,
        [this.projectId, ...keyColumns(added)],
      );
    }
    const liveRefs = new Set(plan.contacts.map(contactRef));
    const goneMembers = plan.refs.filter((r) => !liveRefs.has(r) && this.state.stateOf(r)?.audienceId);
    if (goneMembers.length) {
      await this.em.query(`DELETE FROM audience_members m USING ${REFS} WHERE m.project_id = $1 AND m.data_source_id = r.data_source_id AND m.user_id = r.user_id`, [
        this.projectId,
        ...refArrays(goneMembers),
      ]);
    }
    const c = plan.contacts.filter((x) => {
      const s = this.state.stateOf(contactRef(x));
      return !s || s.audienceId !== plan.result.assignment.get(contactRef(x)) || s.applied !== s.version || s.seq !== x.seq;
    });
    if (!c.length) return;
    await this.em.query(
      `INSERT INTO audience_members (project_id, data_source_id, user_id, audience_id, seq, applied_version, first_at)
       SELECT $1, * FROM unnest($2::uuid[], $3::text[], $4::uuid[], $5::bigint[], $6::bigint[], $7::timestamptz[])
       ON CONFLICT (project_id, data_source_id, user_id)
       DO UPDATE SET audience_id = EXCLUDED.audience_id, applied_version = EXCLUDED.applied_version, first_at = COALESCE(audience_members.first_at, EXCLUDED.first_at)`,
      [
        this.projectId,
        c.map((x) => x.dataSourceId),
        c.map((x) => x.userId),
        c.map((x) => plan.result.assignment.get(contactRef(x))),
        c.map((x) => x.seq),
        c.map((x) => this.state.stateOf(contactRef(x))?.version ?? '0'),
        c.map((x) => firstAt.get(contactRef(x)) ?? null),
      ],
    );
  }

  /** Upserts the audience contacts whose content or `_created_at` changed, in one statement. */
  async upsertAudiences(rows: ReadonlyArray<{ audience: AudienceContact; version: number; createdAt: string }>, at: string): Promise<void> {
    if (!rows.length) return;
    // Stamped with the step's time and the `_created_at` the step worked out (the earliest of
    // the merged contacts', ADR 0353), not now(): the contact read's `_created_at` / `_updated_at`
    // are then the instants its snapshots carry to ClickHouse (`createdAt`, `at`), where the
    // audience filters read them. One JSON parameter rather than jsonb[] ones: pg escapes every
    // element of an array parameter in JavaScript (quote by quote), JSON.stringify of the whole is native.
    await this.em.query(
      `INSERT INTO audience_contacts (project_id, id, attributes, lineage, datasources, ds_contact_ids, version, created_at, updated_at)
       SELECT $1, t.id, t.attributes, t.lineage, t.datasources, t.ds_contact_ids, t.version, t.created_at, $3::timestamptz
         FROM jsonb_to_recordset($2::jsonb) AS t(id uuid, attributes jsonb, lineage jsonb, datasources jsonb, ds_contact_ids jsonb, version bigint, created_at timestamptz)
       ON CONFLICT (project_id, id) DO UPDATE SET attributes = EXCLUDED.attributes, lineage = EXCLUDED.lineage, datasources = EXCLUDED.datasources,
         ds_contact_ids = EXCLUDED.ds_contact_ids, version = EXCLUDED.version, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at`,
      [
        this.projectId,
        JSON.stringify(
          rows.map((r) => ({
            id: r.audience.id,
            attributes: r.audience.attributes,
            lineage: r.audience.lineage,
            datasources: r.audience.dataSources,
            ds_contact_ids: r.audience.dsContactIds,
            version: r.version,
            created_at: r.createdAt,
          })),
        ),
        at,
      ],
    );
  }

  /** Appends the consent history rows of the step. */
  async recordConsentChanges(changes: readonly ConsentChange[], at: string): Promise<void> {
    if (!changes.length) return;
    await this.em.query(
      `INSERT INTO consent_changes (project_id, audience_id, channel, status, previous, source, source_at, changed_at)
       SELECT $1, * FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::timestamptz[])`,
      [
        this.projectId,
        changes.map((c) => c.audienceId),
        changes.map((c) => c.channel),
        changes.map((c) => c.status),
        changes.map((c) => c.previous),
        changes.map((c) => c.source),
        changes.map((c) => c.sourceAt),
        changes.map(() => at),
      ],
    );
  }

  /**
   * Absorbed ids leave `audience_contacts` and resolve to their survivor through
   * `audience_aliases`; earlier aliases of an absorbed id follow it, so every old id resolves in
   * one hop. A survivor is never absorbed in the same step, so one statement per table suffices.
   */
  async recordAbsorbed(absorbed: ReadonlyMap<string, string>): Promise<void> {
    if (!absorbed.size) return;
    const [ids, survivors] = [[...absorbed.keys()], [...absorbed.values()]];
    await this.deleteAudiences(ids);
    await this.em.query(
      `UPDATE audience_aliases a SET survivor_id = x.survivor FROM unnest($2::uuid[], $3::uuid[]) AS x(absorbed, survivor)
        WHERE a.project_id = $1 AND a.survivor_id = x.absorbed`,
      [this.projectId, ids, survivors],
    );
    await this.em.query(
      `INSERT INTO audience_aliases (project_id, absorbed_id, survivor_id) SELECT $1, * FROM unnest($2::uuid[], $3::uuid[])
       ON CONFLICT (project_id, absorbed_id) DO UPDATE SET survivor_id = EXCLUDED.survivor_id`,
      [this.projectId, ids, survivors],
    );
  }

  /** Drops audience contacts left without members (their tombstones are the caller's). */
  async deleteAudiences(ids: readonly string[]): Promise<void> {
    if (!ids.length) return;
    await this.em.query(`DELETE FROM audience_contacts WHERE project_id = $1 AND id = ANY($2::uuid[])`, [this.projectId, ids]);
  }

  /** Queues the step's `meld.audience.v1` messages, in order, for the outbox relay. */
  async enqueue(messages: readonly AudienceChange[]): Promise<void> {
    if (!messages.length) return;
    const { schema, key } = Outputs.audience;
    // A bad message fails the step (its transaction rolls back, the input is retried or
    // dead-lettered, ADR 0236) instead of reaching the relay and the consumers, as ingest's outbox does.
    for (const m of messages) schema.parse(m);
    // A message the relay set aside on one of these keys (Kafka refused it, ADR 0346) is superseded
    // by this step's, which its consumers would take over it anyway; it goes, with the data of the
    // contacts that left the audience contact or were deleted since. Same statement, no round trip.
    await this.em.query(
      `WITH superseded AS (DELETE FROM ${OUTBOX_DEAD_LETTERS} WHERE outbox = 'audience_outbox' AND key IN (SELECT e->>'key' FROM jsonb_array_elements($1::jsonb) AS e))
       INSERT INTO audience_outbox (key, value, trace) SELECT m.e->>'key', m.e->'value', $2::jsonb FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS m(e, n) ORDER BY m.n`,
      [JSON.stringify(messages.map((m) => ({ key: key(m), value: m }))), outboxTrace()],
    );
  }
}
