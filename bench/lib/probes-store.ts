import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { raw, sql } from '../../libs/clickhouse/src';
import { createDataSource } from '../../libs/db/src';
import { type BenchClickHouse, benchClickHouse } from './clickhouse-db';
import { benchPostgres } from './postgres-db';
import { type BenchTenant, createBenchTenant, saveToken } from './tenant';

/**
 * The probes bench's databases (one name in Postgres and in ClickHouse). A million contacts and
 * ten million events take minutes to generate and settle, so a `--keep` run leaves them and its
 * sizes in `bench_meta`; a `--reuse` run with the same sizes starts from them (a fresh product
 * token, the same project). Bench runs hold the bench lock, so one fixed name never collides.
 */
export const PROBES_BENCH_DATABASE = 'meld_bench_probes';

export interface ProbesBenchSizes {
  contacts: number;
  events: number;
  attributes: number;
  types: number;
  days: number;
}

interface Meta extends ProbesBenchSizes {
  now: number;
  organizationId: string;
  projectId: string;
  projectUid: string;
  dataSourceId: string;
}

export interface ProbesBenchStores {
  pg: { url: string; db: DataSource };
  store: BenchClickHouse;
  tenant: BenchTenant;
  /** Unix second the data was generated at (events are dated back from it). */
  now: number;
  /** False when the data must be generated (then `tenant` is new and empty). */
  reused: boolean;
  /** Records the sizes once the data is complete: a later --reuse starts from it. */
  complete(): Promise<void>;
  /** Drops both databases unless `keep`. */
  close(keep: boolean): Promise<void>;
}

const PRODUCT_SCOPES = ['PROJECT_AUDIENCE_READ'] as const;

const sameSizes = (a: ProbesBenchSizes, b: ProbesBenchSizes) => (['contacts', 'events', 'attributes', 'types', 'days'] as const).every((k) => Number(a[k]) === b[k]);

async function dropPostgres(serverUrl: string): Promise<void> {
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${PROBES_BENCH_DATABASE} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

export async function openProbesStores(urls: { pg: string; ch: string }, sizes: ProbesBenchSizes, reuse: boolean): Promise<ProbesBenchStores> {
  const store = await benchClickHouse(urls.ch, PROBES_BENCH_DATABASE);
  await store.ch.command(sql`CREATE TABLE IF NOT EXISTS bench_meta (contacts UInt64, events UInt64, attributes UInt32, types UInt32, days UInt32, now UInt32, organizationId String, projectId String, projectUid String, dataSourceId String) ENGINE = TinyLog`);
  const [meta] = await store.ch.query<Meta>(sql`SELECT * FROM bench_meta`);
  const pgUrl = new URL(urls.pg);
  pgUrl.pathname = `/${PROBES_BENCH_DATABASE}`;
  const closer = (db: DataSource) => async (keep: boolean) => {
    await db.destroy().catch(() => undefined);
    if (keep) return store.ch.close();
    await dropPostgres(urls.pg);
    await store.drop();
  };

  if (reuse && meta && sameSizes(meta, sizes)) {
    const db = await createDataSource({ url: pgUrl.toString(), applicationName: 'meld-bench', poolSize: 4 }).initialize();
    const productToken = await saveToken(db, meta.organizationId, meta.projectUid, 'product', PRODUCT_SCOPES, null);
    const tenant: BenchTenant = { organizationId: meta.organizationId, project: { id: meta.projectId, uid: meta.projectUid }, dataSources: [{ id: meta.dataSourceId, token: '' }], productToken };
    return { pg: { url: pgUrl.toString(), db }, store, tenant, now: Number(meta.now), reused: true, complete: async () => undefined, close: closer(db) };
  }

  for (const table of ['audience_contacts', 'audience_snapshot', 'audience_membership', 'events', 'bench_meta']) await store.ch.command(sql`TRUNCATE TABLE ${raw(table)}`);
  const pg = await benchPostgres(urls.pg, PROBES_BENCH_DATABASE);
  const tenant = await createBenchTenant(pg.db, { name: 'bench-probes', dataSources: 1, productScopes: PRODUCT_SCOPES });
  const now = Math.floor(Date.now() / 1000);
  const complete = async () => {
    const row: Meta = { ...sizes, now, organizationId: tenant.organizationId, projectId: tenant.project.id, projectUid: tenant.project.uid, dataSourceId: tenant.dataSources[0].id };
    await store.ch.insert('bench_meta', [row]);
  };
  return { pg: { url: pg.url, db: pg.db }, store, tenant, now, reused: false, complete, close: closer(pg.db) };
}
