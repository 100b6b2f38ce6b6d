import { CurrentPrincipal, type Principal, projectOf } from '@meld/auth';
import { ApiPostgresUnavailable, ApiErrors, ApiOperation, ApiParam, ApiSuccess, ApiTags, PUBLIC_ROUTE_ERRORS } from '@meld/api';
import { Controller, Get, Param } from '@nestjs/common';
import { AttributeListSchema, EventParameterListSchema, EventTypeListSchema } from './specs.schema';
import { ListAttributes } from './usecases/list-attributes/list-attributes.usecase';
import { ListEventParameters } from './usecases/list-event-parameters/list-event-parameters.usecase';
import { ListEventTypes } from './usecases/list-event-types/list-event-types.usecase';

@ApiTags('specs')
@ApiParam({ name: 'project', description: 'project UID' })
@ApiPostgresUnavailable()
@Controller('v1/project/:project/specs')
export class SpecsController {
  constructor(
    private readonly listEventTypes: ListEventTypes,
    private readonly listEventParameters: ListEventParameters,
    private readonly listAttributes: ListAttributes,
  ) {}

  @Get('events')
  @ApiOperation({ summary: 'List the event catalogue (Event type spec entries)' })
  @ApiSuccess(200, EventTypeListSchema, 'the declared event types')
  @ApiErrors(...PUBLIC_ROUTE_ERRORS)
  events(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string) {
    return this.listEventTypes.execute({ projectId: projectOf(principal, projectUid).id });
  }

  @Get('events/:eventType')
  @ApiOperation({ summary: 'List the parameter specs of an event type', description: 'In filters a parameter is addressed as `<eventType>.<parameter>`. An unknown type is 404.' })
  @ApiParam({ name: 'eventType', description: 'event type uid' })
  @ApiSuccess(200, EventParameterListSchema, 'the parameters of the event type')
  @ApiErrors(...PUBLIC_ROUTE_ERRORS)
  event(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @Param('eventType') eventType: string) {
    return this.listEventParameters.execute({ projectId: projectOf(principal, projectUid).id, eventType });
  }

  @Get('attributes')
  @ApiOperation({ summary: "List the project's attribute catalogue" })
  @ApiSuccess(200, AttributeListSchema, 'every attribute with its flags')
  @ApiErrors(...PUBLIC_ROUTE_ERRORS)
  attributes(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string) {
    return this.listAttributes.execute({ projectId: projectOf(principal, projectUid).id });
  }
}
