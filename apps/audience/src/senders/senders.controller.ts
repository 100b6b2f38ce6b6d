import { ApiPostgresUnavailable, ApiListOperation, ApiParam, ApiTags, ListQueryString } from '@meld/api';
import { CurrentPrincipal, type Principal, projectOf } from '@meld/auth';
import { Controller, Get, Param } from '@nestjs/common';
import { SENDER_FIELDS } from './sender-fields';
import { SenderListSchema } from './sender.schema';
import { ListSenders } from './usecases/list-senders/list-senders.usecase';

const listing = (summary: string, page: string) =>
  ApiListOperation({
    summary,
    description:
      "Oldest first unless `_sort` says otherwise; each with its countries. A `countries*…` condition holds when one of the sender's countries matches it (`countries*country_eq=FR`: reaches FR); its negative operators when none does. Needs PROJECT_DIRECT_READ.",
    resource: SENDER_FIELDS,
    schema: SenderListSchema,
    page,
  });

@ApiParam({ name: 'project', description: 'project UID' })
@ApiPostgresUnavailable()
@Controller('v1/project/:project/channel')
export class SendersController {
  constructor(private readonly listSenders: ListSenders) {}

  @Get('sms/sender')
  @ApiTags('sms-sender')
  @listing("List the project's SMS senders", 'a page of SMS senders')
  sms(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @ListQueryString() queryString: string) {
    return this.listSenders.execute({ projectId: projectOf(principal, projectUid).id, channel: 'sms', queryString });
  }

  @Get('rcs/sender')
  @ApiTags('rcs-sender')
  @listing("List the project's RCS agents", 'a page of RCS agents')
  rcs(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @ListQueryString() queryString: string) {
    return this.listSenders.execute({ projectId: projectOf(principal, projectUid).id, channel: 'rcs', queryString });
  }
}
