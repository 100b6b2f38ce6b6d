import { CurrentPrincipal, type Principal, projectOf } from '@meld/auth';
import { ApiPostgresUnavailable, ApiError, ApiErrors, ApiOperation, ApiParam, ApiSuccess, ApiTags, ApiStoreReadLimits } from '@meld/api';
import { parseInput } from '@meld/platform';
import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { AudienceCountSchema, CountAudienceBody } from './count.schema';
import { CountAudienceUseCase } from './usecases/count-audience/count-audience.usecase';

@ApiTags('audience')
@ApiParam({ name: 'project', description: 'project UID' })
@ApiPostgresUnavailable()
@Controller('v1/project/:project/audience')
export class CountController {
  constructor(private readonly countAudience: CountAudienceUseCase) {}

  @Post('count')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Count the audience',
    description:
      'Exact, live count of the current audience contacts matching the filter `root` (never sampled). `filterCompliance` narrows `totalHits` to contacts that meet every listed channel: `basic` has a valid address for the channel (a mobile for sms, rcs, whatsapp; an email for email) and is not suppressed on it (ADR 0361), `opt-out` is basic and not opted out, `opt-in` is basic and opted in (consent from `_consent_<channel>`, extended across channels by the project\'s `marketingOptOutScope` / `marketingOptInScope`: ADR 0347). `metadata.compliance` breaks the root\'s audience down per listed channel. Conditions on events count the events the project keeps: those within the plan\'s look-back, or an event type\'s shorter retention, whatever the timeframe (ADR 0060). Conditions on email or phone attributes need `dataPolicy.mayReadPii`.',
  })
  @ApiSuccess(200, AudienceCountSchema, 'the count')
  @ApiError(400, 'invalid body: an unknown field, a bad compliance channel or mode (`details.fields`), or a filter node that does not fit the grammar or the catalogue (`details.path`, `details.allowed`)')
  @ApiError(403, 'the token lacks PROJECT_AUDIENCE_READ, or the filter names an email or phone attribute without `dataPolicy.mayReadPii` (`details.path`)')
  @ApiErrors(401, 404, 429)
  @ApiStoreReadLimits()
  async count(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @Body({ schema: CountAudienceBody }) body: unknown) {
    const project = projectOf(principal, projectUid);
    const input = parseInput(CountAudienceBody, body ?? {});
    const { totalHits, compliance } = await this.countAudience.execute({ projectId: project.id, version: input.version, root: input.root, filterCompliance: input.filterCompliance, principal });
    return { metadata: compliance ? { totalHits, compliance } : { totalHits } };
  }
}
