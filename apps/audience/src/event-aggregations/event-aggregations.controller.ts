import { CurrentPrincipal, type Principal, projectOf } from '@meld/auth';
import { ApiPostgresUnavailable, ApiError, ApiErrors, ApiOperation, ApiParam, ApiSuccess, ApiTags, ApiStoreReadLimits } from '@meld/api';
import { parseInput } from '@meld/platform';
import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { AggregateEventsBody, EventAggregationsSchema } from './event-aggregations.schema';
import { AggregateEvents } from './usecases/aggregate-events/aggregate-events.usecase';

@ApiTags('audience')
@ApiParam({ name: 'project', description: 'project UID' })
@ApiPostgresUnavailable()
@Controller('v1/project/:project/event')
export class EventAggregationsController {
  constructor(private readonly aggregate: AggregateEvents) {}

  @Post('aggregations')
  @HttpCode(200)
  @ApiOperation({
    summary: "Aggregate the project's events",
    description:
      "Exact aggregates of the events matching the filter (as in `/event/scroll`), within the look-back of the organization's plan, each event counted once (deduplicated by `_event_id`): `terms` lists the most frequent event types, data sources or values of a parameter; `date_histogram` counts events per hour, day, week or month in a time zone (the project's by default), empty buckets included; `stats` gives the count, min, max, avg and sum of a number parameter. Needs PROJECT_AUDIENCE_READ, PROJECT_AUDIENCE_DATA_EVENTS and PROJECT_AGGREGATIONS (granted by the operator). Parameter values follow the data mode as in the events reads (emails and phone numbers masked in anonymized mode or without PROJECT_AUDIENCE_DATA_BASIC); a blocked project is refused.",
  })
  @ApiSuccess(200, EventAggregationsSchema, 'the aggregates, in the order asked')
  @ApiError(400, 'invalid body: an unknown field, a name used twice, a date out of range, an unknown time zone, a histogram of more than 10,000 buckets (`details.fields`), or an unknown `datasource` (the known ones in `details.known`)')
  @ApiErrors(401, 403, 404, 429)
  @ApiStoreReadLimits()
  aggregations(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @Body({ schema: AggregateEventsBody }) body: unknown) {
    const project = projectOf(principal, projectUid);
    return this.aggregate.execute({ principal, projectId: project.id, ...parseInput(AggregateEventsBody, body ?? {}) });
  }
}
