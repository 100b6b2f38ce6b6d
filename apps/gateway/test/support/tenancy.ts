import { randomUUID } from 'node:crypto';
import { TOKEN_REVOKED_CHANNEL, type TokenKind, issueToken } from '@meld/auth';
import { type DataMode, type Plan, type Scope, defaultAttributionConfig, defaultGeneralConfig } from '@meld/contracts';
import { DataSourceEntity, OrganizationEntity, ProjectEntity, TokenEntity, createDataSource } from '@meld/db';
import { testEnv } from '@meld/testing';
import Redis from 'ioredis';
import type { DataSource } from 'typeorm';

/**
 * Organizations, projects, data sources and tokens written straight through libs/db, so
 * gateway tests do not depend on the admin API. Every name is unique per call: tests
 * share the test database and run in parallel.
 */
export async function openTestDb(): Promise<DataSource> {
  return createDataSource({ url: testEnv().postgresUrl, applicationName: 'gateway-tests', poolSize: 4 }).initialize();
}

const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

export async function createOrganization(db: DataSource, opts: { plan?: Plan; dataMode?: DataMode; funds?: number } = {}) {
  return db.getRepository(OrganizationEntity).save({ name: unique('org'), plan: opts.plan ?? 's', dataMode: opts.dataMode ?? 'normal', funds: opts.funds ?? 0 });
}

export async function createProject(db: DataSource, organizationId: string, opts: { dataMode?: DataMode | null } = {}) {
  return db.getRepository(ProjectEntity).save({
    uid: unique('proj'),
    organizationId,
    name: unique('Project'),
    dataMode: opts.dataMode ?? null,
    attributionConfig: defaultAttributionConfig(),
    generalConfig: defaultGeneralConfig() as unknown as Record<string, Record<string, unknown>>,
  });
}

export async function createDataSourceRow(db: DataSource, projectId: string) {
  return db.getRepository(DataSourceEntity).save({ projectId, uid: unique('ds'), name: unique('Source') });
}

export interface IssuedTestToken {
  id: string;
  token: string;
}

export async function createToken(
  db: DataSource,
  opts: { organizationId: string; kind?: TokenKind; scopes?: Scope[]; projects?: string[]; dataSourceId?: string | null; revoked?: boolean },
): Promise<IssuedTestToken> {
  const kind = opts.kind ?? 'product';
  const issued = issueToken(kind);
  const row = await db.getRepository(TokenEntity).save({
    organizationId: opts.organizationId,
    kind,
    secretHash: issued.secretHash,
    prefix: issued.prefix,
    scopes: opts.scopes ?? [],
    projects: opts.projects ?? [],
    dataSourceId: opts.dataSourceId ?? null,
    revokedAt: opts.revoked ? new Date() : null,
  });
  return { id: row.id, token: issued.token };
}

/** What the admin API does on DELETE /admin/v1/tokens/{id}: set revoked_at, then publish the id. */
export async function revokeToken(db: DataSource, tokenId: string): Promise<void> {
  await db.getRepository(TokenEntity).update({ id: tokenId }, { revokedAt: new Date() });
  const redis = new Redis(testEnv().redisUrl);
  try {
    await redis.publish(TOKEN_REVOKED_CHANNEL, tokenId);
  } finally {
    redis.disconnect();
  }
}

/** One organization with a project, two data sources and a token per kind: the usual cast of a gateway test. */
export async function createTenancy(db: DataSource, opts: { plan?: Plan; dataMode?: DataMode } = {}) {
  const org = await createOrganization(db, opts);
  const project = await createProject(db, org.id);
  const dataSource = await createDataSourceRow(db, project.id);
  const otherDataSource = await createDataSourceRow(db, project.id);
  return { org, project, dataSource, otherDataSource };
}
