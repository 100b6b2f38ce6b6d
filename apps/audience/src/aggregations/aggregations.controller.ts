import { CurrentPrincipal, type Principal, projectOf } from '@meld/auth';
import { ApiPostgresUnavailable, ApiError, ApiErrors, ApiOperation, ApiParam, ApiSuccess, ApiTags, ApiStoreReadLimits } from '@meld/api';
import { parseInput } from '@meld/platform';
import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { AggregateAudienceBody, AudienceAggregationsSchema } from './aggregations.schema';
import { AggregateAudience } from './usecases/aggregate-audience/aggregate-audience.usecase';

@ApiTags('audience')
@ApiParam({ name: 'project', description: 'project UID' })
@ApiPostgresUnavailable()
@Controller('v1/project/:project/audience')
export class AggregationsController {
  constructor(private readonly aggregate: AggregateAudience) {}

  @Post('aggregations')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Aggregate the audience',
    description:
      'Exact, live aggregates of attributes over the current audience contacts matching the filter `root` (never sampled, as `/audience/count`): `terms` lists the most frequent values with their contacts, `stats` the count, min, max, avg and sum of a number or date attribute. Needs PROJECT_AUDIENCE_READ and PROJECT_AGGREGATIONS (granted by the operator). A blocked project is refused; email and phone attributes need `dataPolicy.mayReadPii`; terms values are shown as the contact reads show them (emails and phone numbers in them masked in anonymized mode or without PROJECT_AUDIENCE_DATA_BASIC), values that mask alike counted as one. A filter on events (`group_event`, `event_condition`) needs PROJECT_AUDIENCE_DATA_EVENTS.',
  })
  @ApiSuccess(200, AudienceAggregationsSchema, 'the aggregates, in the order asked')
  @ApiError(400, 'invalid body: an unknown field or attribute, a name used twice, stats of a non-number attribute (`details.fields`), or a filter node that does not fit (`details.path`)')
  @ApiError(403, 'the token lacks a scope, the project is blocked, an email or phone attribute without `dataPolicy.mayReadPii`, or a filter on events without PROJECT_AUDIENCE_DATA_EVENTS (`details.path`)')
  @ApiErrors(401, 404, 429)
  @ApiStoreReadLimits()
  async aggregations(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @Body({ schema: AggregateAudienceBody }) body: unknown) {
    const project = projectOf(principal, projectUid);
    return this.aggregate.execute(principal, project.id, parseInput(AggregateAudienceBody, body ?? {}));
  }
}
