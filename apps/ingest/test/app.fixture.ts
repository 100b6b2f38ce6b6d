import { principalSigner, seedTenancy, startAppUnderTest } from '@meld/fixtures';
import { appDefinition } from '../src/app.definition';

/** The ingest app in-process on the test stores, ready; `overrides` replace env values. */
export const startIngest = (overrides: Record<string, string> = {}) => startAppUnderTest(appDefinition, overrides);

/** `startIngest` with a seeded tenancy and the signer of its data source (ingest write and read scopes). */
export async function startIngestWithTenancy(overrides: Record<string, string> = {}) {
  const started = await startIngest(overrides);
  const tenancy = await seedTenancy(started.db);
  const dsToken = principalSigner(tenancy, { kind: 'datasource', scopes: ['PROJECT_INGEST_WRITE', 'PROJECT_INGEST_READ'], dataSourceId: tenancy.dataSource.id }, 'ingest');
  return { ...started, tenancy, dsToken };
}
