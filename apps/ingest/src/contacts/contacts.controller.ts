import { CurrentPrincipal, type Principal } from '@meld/auth';
import { ApiPostgresUnavailable, ApiCompressedBody, ApiErrors, ApiOperation, ApiParam, ApiSuccess, ApiTags, INGEST_ROUTE_ERRORS } from '@meld/api';
import { Body, Controller, Delete, HttpCode, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { streamCommand } from '../stream/stream.command';
import { DeletedContactSchema, WriteOutcomeSchema } from '../write/write-outcome.schema';
import { DeleteContact } from './usecases/delete-contact/delete-contact.usecase';
import { WriteContacts } from './usecases/write-contacts/write-contacts.usecase';

@ApiTags('ingest')
@ApiParam({ name: 'project', description: 'project UID' })
@ApiParam({ name: 'datasource', description: 'data source id' })
@ApiPostgresUnavailable()
@Controller('v1/project/:project/datasource/:datasource/stream/contacts')
export class ContactsController {
  constructor(
    private readonly writeContacts: WriteContacts,
    private readonly deleteContact: DeleteContact,
  ) {}

  @Post()
  @ApiOperation({
    summary: 'Create or update contacts (1 to 100 per call)',
    description:
      'Omitted attributes keep their value, null clears. A contact holds at most 256 KiB of attributes (262,144 bytes of their JSON): an item that would grow it past that is refused whole, an error on `_user_id` (clearing is always accepted). 202 with per-item outcomes; 422 when every item failed.',
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
    const { status, body: outcome } = await this.writeContacts.execute({ ...streamCommand(principal, project, datasource), body, receivedAt });
    reply.status(status);
    return outcome;
  }

  @Delete(':userId')
  @HttpCode(202)
  @ApiOperation({ summary: 'Delete a contact for good', description: 'Its personal data is removed and the audience recomputed. Unknown contact → 404.' })
  @ApiParam({ name: 'userId', description: 'the contact `_user_id` in this data source' })
  @ApiSuccess(202, DeletedContactSchema, 'deleted; the audience is recomputed within seconds')
  @ApiErrors(...INGEST_ROUTE_ERRORS)
  remove(
    @CurrentPrincipal() principal: Principal,
    @Param('project') project: string,
    @Param('datasource') datasource: string,
    @Param('userId') userId: string,
  ) {
    return this.deleteContact.execute({ ...streamCommand(principal, project, datasource), userId });
  }
}
