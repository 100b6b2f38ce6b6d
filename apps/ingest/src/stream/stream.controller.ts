import { CurrentPrincipal, type Principal } from '@meld/auth';
import { ApiPostgresUnavailable, ApiErrors, ApiOperation, ApiParam, ApiSuccess, ApiTags, INGEST_ROUTE_ERRORS } from '@meld/api';
import { Controller, Get, Headers, Param } from '@nestjs/common';
import { rateLimitUsage } from './rate-limit-usage';
import { streamCommand } from './stream.command';
import { StreamAttributeListSchema, StreamEventParameterListSchema, StreamEventTypeListSchema } from './stream-specs.schema';
import { StreamDescriptionSchema } from './usecases/describe-stream/describe-stream.schema';
import { DescribeStream } from './usecases/describe-stream/describe-stream.usecase';
import { ListStreamAttributes } from './usecases/list-stream-attributes/list-stream-attributes.usecase';
import { ListStreamEventParameters } from './usecases/list-stream-event-parameters/list-stream-event-parameters.usecase';
import { ListStreamEventTypes } from './usecases/list-stream-event-types/list-stream-event-types.usecase';

@ApiTags('ingest')
@ApiParam({ name: 'project', description: 'project UID' })
@ApiParam({ name: 'datasource', description: 'data source id' })
@ApiPostgresUnavailable()
@Controller('v1/project/:project/datasource/:datasource/stream')
export class StreamController {
  constructor(
    private readonly describeStream: DescribeStream,
    private readonly listAttributes: ListStreamAttributes,
    private readonly listEventTypes: ListStreamEventTypes,
    private readonly listEventParameters: ListStreamEventParameters,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Describe the stream: organization, project, data source, recent usage', description: 'The cheapest credential probe.' })
  @ApiSuccess(200, StreamDescriptionSchema, 'the stream and its quota')
  @ApiErrors(...INGEST_ROUTE_ERRORS)
  describe(
    @CurrentPrincipal() principal: Principal,
    @Param('project') project: string,
    @Param('datasource') datasource: string,
    @Headers() headers: Record<string, string | string[] | undefined>,
  ) {
    const command = streamCommand(principal, project, datasource);
    return this.describeStream.execute({ ...command, tokenKind: principal.kind, scopes: principal.scopes, rateLimit: rateLimitUsage(headers) });
  }

  @Get('specs/attributes')
  @ApiOperation({ summary: 'List the attributes this data source accepts (enabled, not internal)' })
  @ApiSuccess(200, StreamAttributeListSchema, 'accepted attributes')
  @ApiErrors(...INGEST_ROUTE_ERRORS)
  attributes(@CurrentPrincipal() principal: Principal, @Param('project') project: string, @Param('datasource') datasource: string) {
    return this.listAttributes.execute(streamCommand(principal, project, datasource));
  }

  @Get('specs/events')
  @ApiOperation({ summary: 'List the event types this data source may send' })
  @ApiSuccess(200, StreamEventTypeListSchema, 'declared event types')
  @ApiErrors(...INGEST_ROUTE_ERRORS)
  events(@CurrentPrincipal() principal: Principal, @Param('project') project: string, @Param('datasource') datasource: string) {
    return this.listEventTypes.execute(streamCommand(principal, project, datasource));
  }

  @Get('specs/events/:eventType')
  @ApiOperation({ summary: 'List the parameters of an event type', description: 'An unknown type is 404.' })
  @ApiParam({ name: 'eventType', description: 'event type uid' })
  @ApiSuccess(200, StreamEventParameterListSchema, 'the parameters of the event type')
  @ApiErrors(...INGEST_ROUTE_ERRORS)
  event(
    @CurrentPrincipal() principal: Principal,
    @Param('project') project: string,
    @Param('datasource') datasource: string,
    @Param('eventType') eventType: string,
  ) {
    return this.listEventParameters.execute({ ...streamCommand(principal, project, datasource), eventType });
  }
}
