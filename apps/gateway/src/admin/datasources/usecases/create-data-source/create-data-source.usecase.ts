import { isUniqueViolation } from '@meld/db';
import { toDataSourceResource } from '@meld/api';
import { ConflictException, Injectable } from '@nestjs/common';
import { ProjectsRepository } from '../../../projects/projects.repository';
import { found } from '../../../shared/found';
import { uidCandidates } from '../../../shared/slug';
import { newDataSourceToken } from '../../data-source-token';
import { DataSourcesRepository } from '../../datasources.repository';
import type { CreateDataSourceCommand } from './create-data-source.command';

/** A data source and its first data-source token (ADR 0018; more are issued by IssueDataSourceToken). */
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
      const token = newDataSourceToken(project, candidate);
      try {
        const created = await this.dataSources.createWithToken(project.id, { ...fields, uid: candidate }, token.values);
        return { entity: toDataSourceResource(created.dataSource), metadata: { project: project.uid, tokenId: created.token.id, token: token.secret } };
      } catch (err) {
        if (!isUniqueViolation(err)) throw err; // uid taken between the check and the insert
      }
    }
    throw new ConflictException(uid ? `data source uid "${uid}" already exists in project "${project.uid}"` : 'could not find a free data source uid: give one explicitly');
  }
}
