import { listQueryOf, pageMetadata, toDataSourceResource } from '@meld/api';
import { Injectable } from '@nestjs/common';
import { DATA_SOURCE_FIELDS } from '../../datasource-fields';
import { DataSourcesRepository } from '../../datasources.repository';
import type { ListDataSourcesCommand } from './list-data-sources.command';

/** The project's data sources through the list filter. */
@Injectable()
export class ListDataSources {
  constructor(private readonly dataSources: DataSourcesRepository) {}

  async execute({ projectId, queryString }: ListDataSourcesCommand) {
    const query = listQueryOf(queryString, DATA_SOURCE_FIELDS);
    const { rows, total } = await this.dataSources.list(projectId, query);
    return { entity: rows.map(toDataSourceResource), metadata: pageMetadata(query, rows.length, total) };
  }
}
