import { issueToken } from '../../libs/auth/src';
import { INGEST_SCOPES, RESERVED_ATTRIBUTES, type Scope, defaultAttributionConfig, defaultGeneralConfig } from '../../libs/contracts/src';
import { AttributeEntity, DataSourceEntity, EventTypeEntity, OrganizationEntity, ProjectEntity, TokenEntity } from '../../libs/db/src';
import type { DataSource } from 'typeorm';

export interface BenchDataSource {
  id: string;
  /** Bearer token of a data-source token with the ingest scopes. */
  token: string;
}

export interface BenchTenant {
  organizationId: string;
  project: { id: string; uid: string };
  dataSources: BenchDataSource[];
  /** Bearer token of a product token with `productScopes`. */
  productToken: string;
}

export async function saveToken(db: DataSource, organizationId: string, projectUid: string, kind: 'datasource' | 'product', scopes: readonly Scope[], dataSourceId: string | null): Promise<string> {
  const issued = issueToken(kind);
  await db.getRepository(TokenEntity).save({ organizationId, kind, secretHash: issued.secretHash, prefix: issued.prefix, scopes: [...scopes], projects: [projectUid], dataSourceId });
  return issued.token;
}

/**
 * A plan-xl organization with one project as the admin API leaves it (reserved attributes,
 * merging on `_email`), a `page_view` event type, `dataSources` data sources each with its
 * ingest token, and one product token. Written straight to the bench's own database.
 */
export async function createBenchTenant(db: DataSource, o: { name: string; dataSources: number; productScopes: readonly Scope[] }): Promise<BenchTenant> {
  const org = await db.getRepository(OrganizationEntity).save({ name: o.name, plan: 'xl' });
  const project = await db.getRepository(ProjectEntity).save({
    uid: o.name,
    organizationId: org.id,
    name: o.name,
    attributionConfig: defaultAttributionConfig(),
    generalConfig: defaultGeneralConfig() as unknown as ProjectEntity['generalConfig'],
    mergingAttributes: ['_email'],
  });
  await db.getRepository(AttributeEntity).insert(RESERVED_ATTRIBUTES.map((a) => ({ ...a, projectId: project.id, reserved: true })));
  await db.getRepository(EventTypeEntity).save({ projectId: project.id, uid: 'page_view', name: 'Page view', category: 'contact_behaviour' });
  const dataSources: BenchDataSource[] = [];
  for (let i = 0; i < o.dataSources; i++) {
    const ds = await db.getRepository(DataSourceEntity).save({ projectId: project.id, uid: `bench-${i}`, name: `Bench ${i}`, priority: i });
    dataSources.push({ id: ds.id, token: await saveToken(db, org.id, project.uid, 'datasource', INGEST_SCOPES, ds.id) });
  }
  const productToken = await saveToken(db, org.id, project.uid, 'product', o.productScopes, null);
  return { organizationId: org.id, project: { id: project.id, uid: project.uid }, dataSources, productToken };
}
