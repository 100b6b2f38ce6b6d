import { join } from 'node:path';
import { type Json, principalSigner, privateDatabase, seedTenancy, startAppUnderTest } from '@meld/fixtures';
import { testEnv } from '@meld/testing';
import { appDefinition } from '../src/app.definition';

/** The ingest app in-process on the test stores, ready; `overrides` replace env values. */
export const startIngest = (overrides: Record<string, string> = {}) => startAppUnderTest(appDefinition, overrides);

/** `startIngest` with a seeded tenancy and the signer of its data source (ingest write and read scopes). */
export async function startIngestWithTenancy(overrides: Record<string, string> = {}) {
  const started = await startIngest(overrides);
  const tenancy = await seedTenancy(started.db);
  const dsToken = principalSigner(tenancy, { kind: 'datasource', scopes: ['PROJECT_INGEST_WRITE', 'PROJECT_INGEST_READ'], dataSourceId: tenancy.dataSource.id }, 'ingest');
  /** POSTs `body` to the data source's `stream/<path>` with its token; answers the status and the JSON body. */
  const streamPost = async (path: string, body: unknown): Promise<{ status: number; body: Json }> => {
    const url = `${started.base}/v1/project/${tenancy.project.uid}/datasource/${tenancy.dataSource.id}/stream/${path}`;
    const res = await fetch(url, { method: 'POST', headers: { ...dsToken('POST', url), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  return { ...started, tenancy, dsToken, streamPost };
}

/**
 * `startIngestWithTenancy` on a database and a development broker of the suite's own (its relay
 * drains only this suite's rows; the broker can be taken down with SIGUSR1 / SIGUSR2, ADR 0006).
 * `close()` brings the broker back up, then stops the app, the broker and drops the database.
 */
export async function startIngestOnPrivateStores(name: string) {
  const stack = require(join(__dirname, '../../../tools/stack'));
  const database = await privateDatabase(testEnv().postgresUrl, name.replace(/-/g, '_'));
  const broker: { name: string; brokers: string; pid: number } = await stack.startBroker({ name: `${name}-${process.pid}` });
  const started = await startIngestWithTenancy({ MELD_KAFKA_BROKERS: broker.brokers, MELD_POSTGRES_URL: database.url });
  const close = async () => {
    process.kill(broker.pid, 'SIGUSR2');
    await started.app.close();
    await stack.stopBroker(broker.name);
    await database.drop();
  };
  return { ...started, broker, close };
}
