import { Injectable, NotFoundException } from '@nestjs/common';
import { ProjectsRepository } from '../../../projects/projects.repository';
import { found } from '../../../shared/found';
import { toTokenResource } from '../../../tokens/token.resource';
import { TokensRepository } from '../../../tokens/tokens.repository';
import { newDataSourceToken } from '../../data-source-token';
import { DataSourcesRepository } from '../../datasources.repository';
import type { IssueDataSourceTokenCommand } from './issue-data-source-token.command';

/**
 * Another token for an existing data source: the ingest spec's rotation ("issue a new one,
 * then revoke the old one", ADR 0329). Both work until the operator revokes the old one, so a
 * source's senders switch over without a gap; the source, its contacts and its stream stay.
 */
@Injectable()
export class IssueDataSourceToken {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly dataSources: DataSourcesRepository,
    private readonly tokens: TokensRepository,
  ) {}

  async execute({ projectUid, dataSource: key, label }: IssueDataSourceTokenCommand) {
    const project = found(await this.projects.findByUid(projectUid), 'project', projectUid);
    const dataSource = await this.dataSources.findInProject(project.id, key);
    if (!dataSource) throw new NotFoundException(`data source "${key}" not found in project "${project.uid}"`);
    const token = newDataSourceToken(project, dataSource.uid, label);
    const saved = await this.tokens.create({ ...token.values, dataSourceId: dataSource.id });
    return { entity: toTokenResource(saved), metadata: { token: token.secret } };
  }
}
