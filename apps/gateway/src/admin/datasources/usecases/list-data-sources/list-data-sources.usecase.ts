import { toDataSourceResource } from '@meld/api';
import { Injectable } from '@nestjs/common';
import { ProjectsRepository } from '../../../projects/projects.repository';
import { found } from '../../../shared/found';
import { DataSourcesRepository } from '../../datasources.repository';

export interface ListDataSourcesCommand {
  projectUid: string;
}

@Injectable()
export class ListDataSources {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly dataSources: DataSourcesRepository,
  ) {}

  async execute({ projectUid }: ListDataSourcesCommand) {
    const project = found(await this.projects.findByUid(projectUid), 'project', projectUid);
    const sources = await this.dataSources.listByProject(project.id);
    return { entity: sources.map(toDataSourceResource), metadata: { count: sources.length } };
  }
}
