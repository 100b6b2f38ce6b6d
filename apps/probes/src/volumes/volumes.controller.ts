import { CurrentPrincipal, type Principal, contactDataView, projectOf } from '@meld/auth';
import { ApiError, ApiErrors, ApiOperation, ApiParam, ApiStoreReadLimits, ApiSuccess, ApiTags } from '@meld/api';
import { parseInput } from '@meld/platform';
import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ProbeCache } from '../shared/probe-cache';
import { ProbeClock } from '../shared/probe-clock';
import { VolumesBody, VolumesSchema } from './volumes.schema';
import { VolumesUseCase } from './volumes.usecase';

@ApiTags('event')
@ApiParam({ name: 'project', description: 'project UID' })
@Controller('v1/project/:project/event')
export class VolumesController {
  constructor(
    private readonly volumes: VolumesUseCase,
    private readonly cache: ProbeCache,
    private readonly clock: ProbeClock,
  ) {}

  @Post('volumes')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Event volumes: how many events of each declared type arrived',
    description:
      'Every declared event type with its exact count, whether anything arrived and the latest date (not in a blocked project: null with `lastSeenAtOmitted`, ADR 0164), in a window of `window` days (default 90 / 30 / 15 by audience size, clamped by the plan look-back), each type limited by its own retention. With `event`, that type’s parameter values: sampled by contact above 10,000 contacts (the band follows the whole project audience), with 95% error bars from the variance of per-contact sums (ADR 0247); an id parameter lists the name beside each id (ADR 0166, 0167).',
  })
  @ApiSuccess(200, VolumesSchema, 'the Event volumes envelope')
  @ApiError(400, 'invalid body (`details.fields`), a filter node that does not fit the grammar or the catalogue (`details.path`), an unknown `event` (`details.eventTypes`) or `datasource` (`details.datasources`)')
  @ApiError(403, 'the token lacks PROJECT_AUDIENCE_READ, or the filter names an email or phone attribute without `dataPolicy.mayReadPii`')
  @ApiErrors(401, 404, 429)
  @ApiStoreReadLimits()
  async volumesOf(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @Body({ schema: VolumesBody }) body: unknown) {
    const project = projectOf(principal, projectUid);
    const input = parseInput(VolumesBody, body ?? {});
    const compute = () => this.volumes.execute({ projectId: project.id, principal, input, now: new Date(this.clock.now()) });
    // The plan sets the window, PII access the values: both are part of the key.
    return this.cache.metadata('event-volumes', project.id, input, { plan: principal.plan, pii: contactDataView(principal) }, compute);
  }
}
