import { ApiError, ApiErrors, ApiOperation, ApiParam, ApiResponse, ApiSuccess, ApiTags, ErrorSchema } from '@meld/api';
import { CurrentPrincipal, type Principal, projectOf } from '@meld/auth';
import { Controller, Get, NotFoundException, Param } from '@nestjs/common';
import { CHANNELS, type ReadinessChannel } from './readiness-rules';
import { ReadinessResponseSchema } from './readiness.schema';
import { GetReadiness } from './usecases/get-readiness/get-readiness.usecase';

const isChannel = (value: string): value is ReadinessChannel => (CHANNELS as readonly string[]).includes(value);

/**
 * The refusals of these routes in their own words: the generic 403 ("lacks a scope") would
 * say a scope is needed where none is (ADR 0131), and the channel route's 404 has a reason of
 * its own (product spec, Errors).
 */
const FORBIDDEN = 'a data-source token: readiness needs no scope, only access to the project (product and OAuth tokens)';
const NOT_FOUND = 'project not found, or not reachable with this token';
/** Postgres down, stalled or not yet connected: the report is recomputed on every call, so there is nothing older to answer with. */
const UNAVAILABLE = ApiResponse({
  status: 503,
  description: 'the readiness store (Postgres) did not answer within its bound (down, stalled or starting); retry after `Retry-After` seconds',
  standardSchema: ErrorSchema,
  headers: { 'Retry-After': { description: 'seconds to wait before retrying', schema: { type: 'integer' } } },
});

@ApiTags('readiness')
@ApiParam({ name: 'project', description: 'project UID' })
@Controller('v1/project/:project/readiness')
export class ReadinessController {
  constructor(private readonly getReadiness: GetReadiness) {}

  @Get()
  @ApiOperation({
    summary: 'Is the project able to send?',
    description: 'Project readiness: steps `import`, `channels`, `legal_profile`, `funds`, the warnings that hold, `reach` null. Recomputed from one consistent read on every call, never cached.',
  })
  @ApiSuccess(200, ReadinessResponseSchema, 'the project readiness report')
  @ApiErrors(401, 429)
  @ApiError(403, FORBIDDEN)
  @ApiError(404, NOT_FOUND)
  @UNAVAILABLE
  project(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string) {
    const { organizationId, id } = projectOf(principal, projectUid);
    return this.getReadiness.execute({ organizationId, projectId: id, channel: null });
  }

  @Get('channel/:channel')
  @ApiOperation({
    summary: 'Is the project able to send on a channel?',
    description:
      "Channel readiness for `sms` (steps `legal_profile`, `add_sender`, `funds`) or `rcs` (`add_agent` instead of `add_sender`), with `reach`: the countries the carriers of the channel's active senders accept. Any other channel is 404. Recomputed on every call, never cached.",
  })
  @ApiParam({ name: 'channel', enum: CHANNELS })
  @ApiSuccess(200, ReadinessResponseSchema, 'the channel readiness report')
  @ApiErrors(401, 429)
  @ApiError(403, FORBIDDEN)
  @ApiError(404, `${NOT_FOUND}; or a channel other than ${CHANNELS.join(' or ')}`)
  @UNAVAILABLE
  channel(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @Param('channel') channel: string) {
    const { organizationId, id } = projectOf(principal, projectUid);
    if (!isChannel(channel)) throw new NotFoundException(`no readiness for channel "${channel}": channels are ${CHANNELS.join(', ')}`);
    return this.getReadiness.execute({ organizationId, projectId: id, channel });
  }
}
