import { CurrentPrincipal, type Principal, projectOf } from '@meld/auth';
import { ApiPostgresUnavailable, ApiError, ApiErrors, ApiOperation, ApiParam, ApiQuery, ApiSuccess, ApiTags, ApiStoreReadLimits } from '@meld/api';
import { Controller, Get, Param, Query } from '@nestjs/common';
import { AudienceEventListSchema } from './events.schema';
import { ListEvents } from './list-events.usecase';

@ApiTags('audience')
@ApiParam({ name: 'project', description: 'project UID' })
@ApiPostgresUnavailable()
@Controller('v1/project/:project/audience')
export class EventsController {
  constructor(private readonly listEvents: ListEvents) {}

  @Get(':audienceId/events')
  @ApiOperation({
    summary: "List an audience contact's events",
    description:
      'Events of every source contact merged into the audience contact, newest first, deduplicated by `_event_id`, within the look-back of the organization plan (s 30, m 90, l 180, xl 365 days; `metadata.lookBackDays`). An absorbed audience id reads its survivor. Needs PROJECT_AUDIENCE_READ and PROJECT_AUDIENCE_DATA_EVENTS. The project\'s data mode applies to parameters and event ids as to contact attributes: emails and phone numbers in them are masked in anonymized mode or without PROJECT_AUDIENCE_DATA_BASIC; a blocked project answers 403.',
  })
  @ApiParam({ name: 'audienceId', description: 'audience contact id' })
  @ApiQuery({ name: '_start', required: false, description: 'offset of the page (with `_limit`)' })
  @ApiQuery({ name: '_limit', required: false, description: 'page size, 1–500, default 50 (with `_start`)' })
  @ApiSuccess(200, AudienceEventListSchema, 'a page of events')
  @ApiError(400, '`_start` without `_limit` (or the reverse), or a value out of range')
  @ApiErrors(401, 403, 404, 429)
  @ApiStoreReadLimits()
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('project') projectUid: string,
    @Param('audienceId') audienceId: string,
    @Query('_start') start?: string,
    @Query('_limit') limit?: string,
  ) {
    const project = projectOf(principal, projectUid);
    return this.listEvents.execute({ principal, projectId: project.id, audienceId, start, limit });
  }
}
