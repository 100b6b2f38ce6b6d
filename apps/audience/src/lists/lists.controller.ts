import { CurrentPrincipal, type Principal, projectOf } from '@meld/auth';
import { ApiPostgresUnavailable, ApiError, ApiErrors, ApiOperation, ApiParam, ApiSuccess, ApiTags, ApiStoreReadLimits } from '@meld/api';
import { parseInput } from '@meld/platform';
import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { AudienceScrollSchema, AudienceSearchSchema, ScrollAudienceBody, SearchAudienceBody } from './lists.schema';
import { ScrollAudience } from './usecases/scroll-audience/scroll-audience.usecase';
import { SearchAudience } from './usecases/search-audience/search-audience.usecase';

const SEEN_AS =
  'Each contact is shown as the single reads show it (data level and data mode: Default id, `_user_id` and the name; Basic adds phone, email, country and booleans; Full everything). Conditions on email or phone attributes need `dataPolicy.mayReadPii`; a filter on events (`group_event`, `event_condition`) needs PROJECT_AUDIENCE_DATA_EVENTS.';
const BAD_BODY = 'invalid body: an unknown field or a size out of range (`details.fields`), or a filter node that does not fit the grammar or the catalogue (`details.path`)';
const FORBIDDEN = 'the token lacks PROJECT_AUDIENCE_READ or PROJECT_AUDIENCE_LIST (plan-gated), or the filter names an email or phone attribute without `dataPolicy.mayReadPii`, or events without PROJECT_AUDIENCE_DATA_EVENTS (`details.path`)';

@ApiTags('audience')
@ApiParam({ name: 'project', description: 'project UID' })
@ApiPostgresUnavailable()
@Controller('v1/project/:project/audience')
export class ListsController {
  constructor(
    private readonly scrollAudience: ScrollAudience,
    private readonly searchAudience: SearchAudience,
  ) {}

  @Post('scroll')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Scroll through the audience',
    description: `Every current audience contact matching the filter \`root\`, page after page in a stable order: send \`metadata.scrollId\` back with the same \`version\` and \`root\` until it is null. A scroll id keeps nothing on the server and does not expire. A contact present throughout is listed exactly once; one created or changed meanwhile may or may not be. ${SEEN_AS}`,
  })
  @ApiSuccess(200, AudienceScrollSchema, 'a page of contacts')
  @ApiError(400, `${BAD_BODY}, or a scrollId issued for another filter`)
  @ApiError(403, FORBIDDEN)
  @ApiErrors(401, 404, 429)
  @ApiStoreReadLimits()
  async scroll(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @Body({ schema: ScrollAudienceBody }) body: unknown) {
    const project = projectOf(principal, projectUid);
    const input = parseInput(ScrollAudienceBody, body ?? {});
    return this.scrollAudience.execute({ principal, projectId: project.id, ...input });
  }

  @Post('search')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Search the audience',
    description: `One page (\`from\`, \`size\`) of the current audience contacts matching the filter \`root\`, in the same stable order as a scroll, or ordered by up to three single-valued attributes (\`sort\`: contacts without a value last, ties in the stable order); \`metadata.more\` says whether more follow. No total: the audience size is \`/audience/count\`'s alone (probe rule 1). \`from + size\` stops at 10,000: read further with a scroll. ${SEEN_AS}`,
  })
  @ApiSuccess(200, AudienceSearchSchema, 'a page of contacts')
  @ApiError(400, `${BAD_BODY}, or a sort attribute unknown or multivalue (\`details.fields\`)`)
  @ApiError(403, `${FORBIDDEN}; a sort by an email or phone attribute without \`dataPolicy.mayReadPii\`, or any sort in a blocked project`)
  @ApiErrors(401, 404, 429)
  @ApiStoreReadLimits()
  async search(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @Body({ schema: SearchAudienceBody }) body: unknown) {
    const project = projectOf(principal, projectUid);
    const input = parseInput(SearchAudienceBody, body ?? {});
    return this.searchAudience.execute({ principal, projectId: project.id, ...input });
  }
}
