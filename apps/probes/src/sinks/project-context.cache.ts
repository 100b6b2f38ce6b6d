import { ATTRIBUTE_TYPES, type AttributeType } from '@meld/contracts';
import type { DataSource } from 'typeorm';
import type { ProjectContext, SlottedAttribute } from './audience-contact-row';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const KNOWN_TYPES = new Set<string>(ATTRIBUTE_TYPES);

export interface ProjectContextCacheOptions {
  /** How long a project's catalogue is trusted (types do not change; new attributes trigger a refresh anyway). */
  ttlMs: number;
  /** Clock difference tolerated between Postgres (which stamps `at`) and this process. */
  clockSkewMs: number;
}

interface Entry {
  context: ProjectContext;
  /** When the read that produced it started (this process' clock). */
  readAt: number;
}

/**
 * Attribute types and slots and the locale per project, from Postgres (`attributes`, `projects`), cached.
 * Ingest creates an attribute in the transaction of the first write that uses it, so it
 * exists before the merge step (time `at`) that puts it in a snapshot: a key missing from a
 * catalogue read that started after `at` is truly unknown (typed by its JSON value); missing
 * from an older read, the catalogue is read again. So a new attribute is typed from its first
 * snapshot, and an unknown one costs no query per message once the catalogue is newer than it.
 * A project that does not exist in Postgres gets an empty catalogue and no locale.
 */
export class ProjectContextCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<Entry>>();

  constructor(
    private readonly db: DataSource,
    private readonly options: ProjectContextCacheOptions = { ttlMs: 60_000, clockSkewMs: 1_000 },
    private readonly clock: () => number = Date.now,
  ) {}

  /** The context for a snapshot of step time `at` (ISO) naming `keys`. */
  async get(projectId: string, keys: readonly string[], at: string): Promise<ProjectContext> {
    let entry = this.entries.get(projectId);
    if (!entry || this.clock() - entry.readAt >= this.options.ttlMs) entry = await this.load(projectId);
    const unknown = keys.some((k) => !entry!.context.types.has(k));
    if (unknown && entry.readAt < Date.parse(at) + this.options.clockSkewMs) entry = await this.load(projectId);
    return entry.context;
  }

  private load(projectId: string): Promise<Entry> {
    let pending = this.loading.get(projectId);
    if (!pending) {
      pending = this.read(projectId).finally(() => this.loading.delete(projectId));
      this.loading.set(projectId, pending);
    }
    return pending;
  }

  private async read(projectId: string): Promise<Entry> {
    const started = this.clock();
    let context: ProjectContext = { types: new Map(), slotted: [], locale: null };
    if (UUID.test(projectId)) {
      const rows: Array<{ uid: string | null; type: string | null; multivalue: boolean | null; slot: number | null; locale: string }> = await this.db.query(
        `SELECT a.uid, a.type, a.multivalue, a.slot, p.locale FROM projects p LEFT JOIN attributes a ON a.project_id = p.id WHERE p.id = $1`,
        [projectId],
      );
      if (rows.length) {
        const types = new Map<string, AttributeType>();
        const slotted: SlottedAttribute[] = [];
        for (const r of rows) {
          if (!r.uid || !r.type || !KNOWN_TYPES.has(r.type)) continue;
          const type = r.type as AttributeType;
          types.set(r.uid, type);
          if (r.slot !== null) slotted.push({ uid: r.uid, type, multivalue: r.multivalue ?? false, slot: r.slot });
        }
        context = { types, slotted, locale: rows[0].locale };
      }
    }
    const entry = { context, readAt: started };
    this.entries.set(projectId, entry);
    return entry;
  }
}
