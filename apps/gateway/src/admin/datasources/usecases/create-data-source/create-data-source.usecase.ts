import { issueToken } from '@meld/auth';
import { INGEST_SCOPES } from '@meld/contracts';
import { isUniqueViolation } from '@meld/db';
import { toDataSourceResource } from '@meld/api';
import { ConflictException, Injectable } from '@nestjs/common';
import { ProjectsRepository } from '../../../projects/projects.repository';
import { found } from '../../../shared/found';
import { uidCandidates } from '../../../shared/slug';
import { DataSourcesRepository } from '../../datasources.repository';
import type { CreateDataSourceCommand } from './create-data-source.command';

/**
 * A data source and its data-source token (write-only, this source only; the gateway
 * grants it the ingest scopes whatever is stored, we store them so a listing reads right).
 */
@Injectable()
export class CreateDataSource {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly dataSources: DataSourcesRepository,
  ) {}

  async execute({ projectUid, uid, ...fields }: CreateDataSourceCommand) {
    const project = found(await this.projects.findByUid(projectUid), 'project', projectUid);
    for (const candidate of uid ? [uid] : uidCandidates(fields.name, 'source')) {
      if (await this.dataSources.uidTaken(project.id, candidate)) continue;
      const issued = issueToken('datasource');
      const token = {
        organizationId: project.organizationId,
        kind: 'datasource' as const,
        secretHash: issued.secretHash,
        prefix: issued.prefix,
        scopes: [...INGEST_SCOPES],
        projects: [project.uid],
        label: `data source ${candidate}`,
      };
      try {
        const created = await this.dataSources.createWithToken(project.id, { ...fields, uid: candidate }, token);
        return { entity: toDataSourceResource(created.dataSource), metadata: { project: project.uid, tokenId: created.token.id, token: issued.token } };
      } catch (err) {
        if (!isUniqueViolation(err)) throw err; // uid taken between the check and the insert
      }
    }
    throw new ConflictException(uid ? `data source uid "${uid}" already exists in project "${project.uid}"` : 'could not find a free data source uid: give one explicitly');
  }
}
