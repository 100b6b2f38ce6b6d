import { CurrentPrincipal, type Principal } from '@meld/auth';
import { ApiPostgresUnavailable, ApiCompressedBody, ApiErrors, ApiOperation, ApiParam, ApiSuccess, ApiTags, INGEST_ROUTE_ERRORS } from '@meld/api';
import { Body, Controller, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { streamCommand } from '../stream/stream.command';
import { WriteOutcomeSchema } from '../write/write-outcome.schema';
import { WriteEvents } from './usecases/write-events/write-events.usecase';

@ApiTags('ingest')
@ApiParam({ name: 'project', description: 'project UID' })
@ApiParam({ name: 'datasource', description: 'data source id' })
@ApiPostgresUnavailable()
@Controller('v1/project/:project/datasource/:datasource/stream/events')
export class EventsController {
  constructor(private readonly writeEvents: WriteEvents) {}

  @Post()
  @ApiOperation({
    summary: 'Record events (up to 100 per call)',
    description:
      'Deduplicated by `_event_id`; answered after Kafka acknowledged them. An event carries at most 16 KiB of `_event_parameters` and 256 KiB of `_user_data` (262,144 bytes of its JSON, names cleared with null included): a larger one is an error on that field, and nothing of the item is applied. 202 with per-item outcomes; 422 when every item failed.',
  })
  @ApiSuccess(202, WriteOutcomeSchema, 'accepted; inspect items[] for per-item errors')
  @ApiSuccess(422, WriteOutcomeSchema, 'every item failed validation')
  @ApiErrors(400, 413, ...INGEST_ROUTE_ERRORS)
  @ApiCompressedBody()
  async write(
    @CurrentPrincipal() principal: Principal,
    @Param('project') project: string,
    @Param('datasource') datasource: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const receivedAt = new Date().toISOString();
    const { status, body: outcome } = await this.writeEvents.execute({ ...streamCommand(principal, project, datasource), body, receivedAt });
    reply.status(status);
    return outcome;
  }
}
