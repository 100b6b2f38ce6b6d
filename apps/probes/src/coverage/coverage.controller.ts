import { CurrentPrincipal, type Principal, contactDataView, projectOf } from '@meld/auth';
import { ApiError, ApiErrors, ApiOperation, ApiParam, ApiStoreReadLimits, ApiSuccess, ApiTags } from '@meld/api';
import { parseInput } from '@meld/platform';
import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { CoverageBody, CoverageSchema } from './coverage.schema';
import { ProbeCache } from '../shared/probe-cache';
import { ProbeClock } from '../shared/probe-clock';
import { CoverageUseCase } from './coverage.usecase';

@ApiTags('audience')
@ApiParam({ name: 'project', description: 'project UID' })
@Controller('v1/project/:project/audience')
export class CoverageController {
  constructor(
    private readonly coverage: CoverageUseCase,
    private readonly cache: ProbeCache,
    private readonly clock: ProbeClock,
  ) {}

  @Post('coverage')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Profile the audience: attribute coverage',
    description:
      'How full each attribute is, its distinct values and most common values, over the current contacts (narrowed by `root` and `datasource`). Above 10,000 contacts fill rates and top values are estimated from a hash sample of the contacts (band in `sampling`) with 95% error bars; distinct values come from a sketch over every contact. A probe reports shape, never audience size: use `/audience/count`.',
  })
  @ApiSuccess(200, CoverageSchema, 'the Coverage envelope')
  @ApiError(400, 'invalid body (`details.fields`), a filter node that does not fit the grammar or the catalogue (`details.path`), or an unknown `datasource` (`details.datasources` lists the project\'s data sources)')
  @ApiError(403, 'the token lacks PROJECT_AUDIENCE_READ, or the filter names an email or phone attribute without `dataPolicy.mayReadPii`')
  @ApiErrors(401, 404, 429)
  @ApiStoreReadLimits()
  async profile(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @Body({ schema: CoverageBody }) body: unknown) {
    const project = projectOf(principal, projectUid);
    const input = parseInput(CoverageBody, body ?? {});
    const compute = () => this.coverage.execute({ projectId: project.id, principal, input, now: new Date(this.clock.now()) });
    // PII values depend on the caller's data access: part of the key.
    return this.cache.metadata('coverage', project.id, input, { pii: contactDataView(principal) }, compute);
  }
}
