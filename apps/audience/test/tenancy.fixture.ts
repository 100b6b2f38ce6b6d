import { randomUUID } from 'node:crypto';
import { RESERVED_ATTRIBUTES, type Scope, defaultAttributionConfig, defaultGeneralConfig } from '@meld/contracts';
import { AttributeEntity, DataSourceEntity, EventParameterEntity, EventTypeEntity, OrganizationEntity, ProjectEntity } from '@meld/db';
import { encodePrincipal } from '@meld/auth';
import type { DataSource } from 'typeorm';

export const PRINCIPAL_SECRET = 'meld-test-principal-secret';

/** A parsed JSON response body: its shape is what the assertions check. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/**
 * An organization with one project as the admin API leaves it (reserved attributes seeded,
 * merging on `_email`), plus a custom attribute, an internal disabled one and one event type.
 * Written straight to Postgres: the admin API lives in the gateway, which this app's tests
 * must not import.
 */
export async function seedTenancy(ds: DataSource) {
  const tag = randomUUID().slice(0, 8);
  const organization = await ds.getRepository(OrganizationEntity).save({ name: `Org ${tag}`, plan: 'm' as const, funds: 42.5 });
  const project = await ds.getRepository(ProjectEntity).save({
    uid: `audience-${tag}`,
    organizationId: organization.id,
    name: `Project ${tag}`,
    generalConfig: defaultGeneralConfig() as unknown as ProjectEntity['generalConfig'],
    attributionConfig: defaultAttributionConfig(),
    mergingAttributes: ['_email'],
  });
  await ds.getRepository(AttributeEntity).insert([
    ...RESERVED_ATTRIBUTES.map((a) => ({ ...a, projectId: project.id, reserved: true })),
    { projectId: project.id, uid: 'loyalty_tier', label: 'Loyalty tier', type: 'string' as const },
    { projectId: project.id, uid: 'legacy_score', label: 'Legacy score', type: 'number' as const, enabled: false, internal: true },
  ]);
  const eventType = await ds.getRepository(EventTypeEntity).save({ projectId: project.id, uid: 'purchase', name: 'Purchase', category: 'ecommerce', attribution: true });
  await ds.getRepository(EventParameterEntity).insert([
    { eventTypeId: eventType.id, parameter: 'product-id', title: 'Product id', dataType: 'string', required: true, maxLength: 64 },
    { eventTypeId: eventType.id, parameter: 'amount', title: 'Amount', dataType: 'number' },
  ]);
  const dataSource = await ds.getRepository(DataSourceEntity).save({ projectId: project.id, uid: `web-${tag}`, name: 'Web' });
  return { organization, project, dataSource };
}

export function principalHeader(
  tenancy: { organization: { id: string }; project: { id: string; uid: string } },
  { scopes = [] as Scope[], kind = 'product' as 'product' | 'datasource', dataSourceId = null as string | null } = {},
): Record<string, string> {
  const principal = encodePrincipal(
    {
      kind,
      tokenId: randomUUID(),
      organizationId: tenancy.organization.id,
      plan: 'm',
      scopes,
      project: { id: tenancy.project.id, uid: tenancy.project.uid, dataMode: 'normal' },
      dataSourceId,
      requestId: randomUUID(),
    },
    PRINCIPAL_SECRET,
  );
  return { 'x-meld-principal': principal };
}
