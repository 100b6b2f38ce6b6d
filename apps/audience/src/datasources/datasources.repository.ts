import { listPage } from '@meld/api';
import { DATA_SOURCE, type DataSourceEntity } from '@meld/db';
import type { ListQuery } from '@meld/filters';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { DATA_SOURCE_FIELDS } from './datasource-fields';

@Injectable()
export class DataSourcesRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  list(projectId: string, query: ListQuery) {
    return listPage<DataSourceEntity>(
      this.ds,
      {
        columns: `d.id, d.project_id AS "projectId", d.uid, d.name, d.connector, d.priority, d.created_at AS "createdAt"`,
        from: 'data_sources d',
        scope: 'd.project_id = $1',
        scopeParams: [projectId],
      },
      query,
      DATA_SOURCE_FIELDS,
    );
  }
}
