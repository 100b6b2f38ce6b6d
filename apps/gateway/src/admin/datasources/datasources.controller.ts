import { ApiPostgresUnavailable, ApiTags, DataSourceSchema, envelope } from '@meld/api';
import { Controller, Get, Param, Post, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { AdminOperation } from '../http/admin-docs';
import { AdminTokenGuard } from '../http/admin-token.guard';
import { JsonBody } from '../http/json-body';
import { IssuedTokenSchema, TokenSchema } from '../tokens/token.resource';
import { CreateDataSourceBody, type CreateDataSourceCommand } from './usecases/create-data-source/create-data-source.command';
import { CreateDataSource } from './usecases/create-data-source/create-data-source.usecase';
import { IssueDataSourceTokenBody, type IssueDataSourceTokenCommand } from './usecases/issue-data-source-token/issue-data-source-token.command';
import { IssueDataSourceToken } from './usecases/issue-data-source-token/issue-data-source-token.usecase';
import { ListDataSources } from './usecases/list-data-sources/list-data-sources.usecase';

const CreatedDataSourceMetadata = z.object({
  project: z.string(),
  tokenId: z.string(),
  token: z.string().describe('the data-source token; shown once, store it now'),
});

@ApiTags('admin')
@UseGuards(AdminTokenGuard)
@ApiPostgresUnavailable()
@Controller('admin/v1/projects/:project/datasources')
export class DataSourcesController {
  constructor(
    private readonly createDataSource: CreateDataSource,
    private readonly listDataSources: ListDataSources,
    private readonly issueToken: IssueDataSourceToken,
  ) {}

  @Post()
  @AdminOperation('Create a data source and its data-source token (metadata.token, shown once)', 201, envelope(DataSourceSchema, CreatedDataSourceMetadata), [400, 404, 409])
  create(@Param('project') projectUid: string, @JsonBody(CreateDataSourceBody) body: Omit<CreateDataSourceCommand, 'projectUid'>) {
    return this.createDataSource.execute({ ...body, projectUid });
  }

  @Get()
  @AdminOperation("List a project's data sources", 200, envelope(z.array(DataSourceSchema), z.object({ count: z.int() })), [404])
  list(@Param('project') projectUid: string) {
    return this.listDataSources.execute({ projectUid });
  }

  @Post(':dataSource/tokens')
  @AdminOperation(
    'Issue another token for a data source (uid or id), to rotate: the old one works until it is revoked (metadata.token, shown once)',
    201,
    envelope(TokenSchema, IssuedTokenSchema),
    [400, 404],
  )
  issue(@Param('project') projectUid: string, @Param('dataSource') dataSource: string, @JsonBody(IssueDataSourceTokenBody) body: Omit<IssueDataSourceTokenCommand, 'projectUid' | 'dataSource'>) {
    return this.issueToken.execute({ ...body, projectUid, dataSource });
  }
}
