import type { DataSourceRecord, ProjectRecord } from '@meld/auth';
import type { DataMode } from '@meld/contracts';
import { query } from './store-unavailable';
import { TtlCache } from './ttl-cache';

type Db = { isInitialized: boolean; query(sql: string, params?: unknown[]): Promise<unknown> };

const PROJECT_SQL = `SELECT p.id, p.uid, p.organization_id, p.name, COALESCE(p.data_mode, o.data_mode) AS data_mode
  FROM projects p JOIN organizations o ON o.id = p.organization_id WHERE p.uid = $1`;
const DATA_SOURCE_SQL = 'SELECT id, project_id FROM data_sources WHERE id = $1';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Projects by UID and data sources by id, cached like tokens. Misses are not cached, so a
 * project created a moment ago is found at once; a change of data mode or plan shows
 * within the TTL (or at once when `meld.tenancy.changed` is published).
 */
export class TenancyStore {
  private readonly projects: TtlCache<string, ProjectRecord>;
  private readonly dataSources: TtlCache<string, DataSourceRecord>;

  constructor(
    private readonly ds: Db,
    ttlMs: number,
    maxEntries = 10_000,
  ) {
    this.projects = new TtlCache(maxEntries, ttlMs);
    this.dataSources = new TtlCache(maxEntries, ttlMs);
  }

  /** The project when memory holds it, else undefined (then `project`): no promise on the common path (ADR 0270). */
  cachedProject(uid: string): ProjectRecord | undefined {
    return this.projects.get(uid);
  }

  /** The data source when memory holds it, null for an id that cannot be one, else undefined (then `dataSource`). */
  cachedDataSource(id: string): DataSourceRecord | null | undefined {
    return UUID.test(id) ? this.dataSources.get(id) : null;
  }

  async project(uid: string): Promise<ProjectRecord | null> {
    // No project holds U+0000 (Postgres text cannot): not found, rather than a failed query answered 503.
    if (uid.includes('\u0000')) return null;
    const hit = this.projects.get(uid);
    if (hit) return hit;
    const [row] = await query<{ id: string; uid: string; organization_id: string; name: string; data_mode: DataMode }>(this.ds, PROJECT_SQL, [uid]);
    if (!row) return null;
    const project = { id: row.id, uid: row.uid, organizationId: row.organization_id, name: row.name, dataMode: row.data_mode };
    this.projects.set(uid, project);
    return project;
  }

  async dataSource(id: string): Promise<DataSourceRecord | null> {
    if (!UUID.test(id)) return null;
    const hit = this.dataSources.get(id);
    if (hit) return hit;
    const [row] = await query<{ id: string; project_id: string }>(this.ds, DATA_SOURCE_SQL, [id]);
    if (!row) return null;
    const dataSource = { id: row.id, projectId: row.project_id };
    this.dataSources.set(id, dataSource);
    return dataSource;
  }

  clear(): void {
    this.projects.clear();
    this.dataSources.clear();
  }
}
