import { ApiPostgresUnavailable, ApiListOperation, ApiParam, ApiTags, DataSourceSchema, ListQueryString, listEnvelope } from '@meld/api';
import { CurrentPrincipal, type Principal, projectOf } from '@meld/auth';
import { Controller, Get, Param } from '@nestjs/common';
import { DATA_SOURCE_FIELDS } from './datasource-fields';
import { ListDataSources } from './usecases/list-data-sources/list-data-sources.usecase';

export const DataSourceListSchema = listEnvelope(DataSourceSchema, 'DataSourceList');

@ApiTags('datasource')
@ApiParam({ name: 'project', description: 'project UID' })
@ApiPostgresUnavailable()
@Controller('v1/project/:project/datasource')
export class DataSourcesController {
  constructor(private readonly listDataSources: ListDataSources) {}

  @Get()
  @ApiListOperation({
    summary: "List the project's data sources",
    description: 'Oldest first unless `_sort` says otherwise. Needs PROJECT_DATASOURCE_READ.',
    resource: DATA_SOURCE_FIELDS,
    schema: DataSourceListSchema,
    page: 'a page of data sources',
  })
  list(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @ListQueryString() queryString: string) {
    return this.listDataSources.execute({ projectId: projectOf(principal, projectUid).id, queryString });
  }
}
