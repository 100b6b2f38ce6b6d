import { CurrentPrincipal, type Principal, projectOf } from '@meld/auth';
import { ApiPostgresUnavailable, ApiError, ApiErrors, ApiOperation, ApiParam, ApiSuccess, ApiTags, ApiStoreReadLimits } from '@meld/api';
import { parseInput } from '@meld/platform';
import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { EventScrollSchema, EventSearchSchema, ScrollEventsBody, SearchEventsBody } from './event-lists.schema';
import { ScrollEvents } from './usecases/scroll-events/scroll-events.usecase';
import { SearchEvents } from './usecases/search-events/search-events.usecase';

const SHOWN =
  "Events are deduplicated by `_event_id`, within the look-back of the organization's plan (`metadata.since`), each with the source contact that produced it and the audience contact it belongs to now. An audience filter `root` (or a saved `segment`) keeps the events of the contacts it selects now, through their current source contacts; it costs a read of the membership per date window (ADR 0332). Needs PROJECT_AUDIENCE_READ, PROJECT_AUDIENCE_DATA_EVENTS and PROJECT_AUDIENCE_LIST. The data mode applies to parameters, event ids and user ids as in the per-contact events read: emails and phone numbers masked in anonymized mode or without PROJECT_AUDIENCE_DATA_BASIC; a blocked project answers 403, and so does a `root` naming an email or phone attribute without `dataPolicy.mayReadPii`.";
const BAD_BODY = 'invalid body: an unknown field, a date or size out of range (`details.fields`), or an unknown `datasource` (the known ones in `details.known`), or a `root` that does not fit the grammar or the catalogue (`details.path`); 404 for an unknown `segment`';

@ApiTags('audience')
@ApiParam({ name: 'project', description: 'project UID' })
@ApiPostgresUnavailable()
@Controller('v1/project/:project/event')
export class EventListsController {
  constructor(
    private readonly scrollEvents: ScrollEvents,
    private readonly searchEvents: SearchEvents,
  ) {}

  @Post('scroll')
  @HttpCode(200)
  @ApiOperation({
    summary: "Scroll through the project's events",
    description: `Every event matching the filter, oldest first, page after page: send \`metadata.scrollId\` back with the same filter until it is null. A scroll id keeps nothing on the server and is opaque: the position in it is sealed (it never shows an event id). ${SHOWN}`,
  })
  @ApiSuccess(200, EventScrollSchema, 'a page of events')
  @ApiError(400, `${BAD_BODY}, or a scrollId issued for another filter`)
  @ApiErrors(401, 403, 404, 429)
  @ApiStoreReadLimits()
  scroll(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @Body({ schema: ScrollEventsBody }) body: unknown) {
    const project = projectOf(principal, projectUid);
    return this.scrollEvents.execute({ principal, projectId: project.id, ...parseInput(ScrollEventsBody, body ?? {}) });
  }

  @Post('search')
  @HttpCode(200)
  @ApiOperation({
    summary: "Search the project's events",
    description: `One page (\`from\`, \`size\`) of the events matching the filter, newest first; \`metadata.more\` says whether more follow. \`from + size\` stops at 10,000: read further with a scroll. ${SHOWN}`,
  })
  @ApiSuccess(200, EventSearchSchema, 'a page of events')
  @ApiError(400, BAD_BODY)
  @ApiErrors(401, 403, 404, 429)
  @ApiStoreReadLimits()
  search(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @Body({ schema: SearchEventsBody }) body: unknown) {
    const project = projectOf(principal, projectUid);
    return this.searchEvents.execute({ principal, projectId: project.id, ...parseInput(SearchEventsBody, body ?? {}) });
  }
}
