import { createDataSource } from './data-source';

/** Applies pending Postgres migrations; used by `meld migrate` and the k8s migrate Job. */
export async function migratePostgres(url: string, log: (line: string) => void = console.log): Promise<string[]> {
  const ds = createDataSource({ url, applicationName: 'meld-migrate', poolSize: 1 });
  await ds.initialize();
  try {
    const applied = await ds.runMigrations({ transaction: 'each' });
    for (const m of applied) log(`postgres: applied ${m.name}`);
    if (!applied.length) log('postgres: up to date');
    return applied.map((m) => m.name);
  } finally {
    await ds.destroy();
  }
}

/**
 * Whether migrations of this build are not applied yet: what an app's init container waits on
 * so a new version never serves on the old schema (ADR 0171). Reads only; creates nothing.
 */
export async function postgresMigrationsPending(url: string): Promise<boolean> {
  const ds = createDataSource({ url, applicationName: 'meld-await-schema', poolSize: 1 });
  await ds.initialize();
  try {
    return await ds.showMigrations();
  } finally {
    await ds.destroy();
  }
}
