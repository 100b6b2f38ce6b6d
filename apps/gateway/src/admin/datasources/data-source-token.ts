import { issueToken } from '@meld/auth';
import { INGEST_SCOPES } from '@meld/contracts';
import type { TokenEntity } from '@meld/db';

/**
 * A new data-source token for one source of a project, and its secret (shown once). Write-only,
 * this source only: the gateway grants it the ingest scopes whatever is stored; they are stored
 * so a listing reads right.
 */
export function newDataSourceToken(
  project: { id: string; uid: string; organizationId: string },
  dataSourceUid: string,
  label?: string,
): { values: Partial<TokenEntity>; secret: string } {
  const issued = issueToken('datasource');
  return {
    values: {
      organizationId: project.organizationId,
      kind: 'datasource',
      secretHash: issued.secretHash,
      prefix: issued.prefix,
      scopes: [...INGEST_SCOPES],
      projects: [project.uid],
      label: label ?? `data source ${dataSourceUid}`,
    },
    secret: issued.token,
  };
}
