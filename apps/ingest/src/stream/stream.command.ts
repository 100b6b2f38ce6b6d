import type { Principal } from '@meld/auth';
import { NotFoundException } from '@nestjs/common';

/** What every stream read starts from: the tenant, the project and data source of the path, and the caller's token. */
export interface StreamCommand {
  organizationId: string;
  projectId: string;
  dataSourceId: string;
  /** Set for data-source tokens: the one data source they may use. */
  tokenDataSourceId: string | null;
}

/**
 * The gateway resolved the path's project into the principal and checked access; a path
 * that disagrees with the principal is answered as "not found", never served from the path.
 */
export function streamCommand(principal: Principal, projectUid: string, dataSourceId: string): StreamCommand {
  if (!principal.project || !principal.organizationId || principal.project.uid !== projectUid) throw new NotFoundException('project not found');
  return {
    organizationId: principal.organizationId,
    projectId: principal.project.id,
    // Ids are UUIDs, matched by the gateway in any case; Postgres spells them in lower case and
    // identity-merge keys its state by that spelling, so a message must not carry the path's.
    dataSourceId: dataSourceId.toLowerCase(),
    tokenDataSourceId: principal.kind === 'datasource' ? principal.dataSourceId : null,
  };
}
