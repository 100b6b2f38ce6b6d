import { ApiPostgresUnavailable, ApiError, ApiRetryLater, ApiErrors, ApiHeader, ApiListOperation, ApiOperation, ApiParam, ApiSuccess, ApiTags, ListQueryString, listEnvelope } from '@meld/api';
import { CONTACT_DATA_BLOCKED, CurrentPrincipal, type Principal, dataModeOf, dataPolicy, projectOf } from '@meld/auth';
import { parseInput } from '@meld/platform';
import { Body, Controller, ForbiddenException, Get, Headers, HttpCode, Param, Post } from '@nestjs/common';
import { GetSms } from './read/get-sms.usecase';
import { ListSms } from './read/list-sms.usecase';
import { SMS_FIELDS } from './read/sms-fields';
import { SendDirectSms } from './send/send-direct.usecase';
import { DirectSmsBody, DirectSmsCreated, DirectSmsHeaders, SmsReadEntity, SmsReadResponse } from './sms.schema';

const MAX_IDEMPOTENCY_KEY = 255; // DirectSmsHeaders

/**
 * A message is contact data (who was sent what, when, and how it went), so a blocked project's
 * reads are refused as its event reads are (ADR 0121); its webhooks still report every status change (ADR 0351).
 * The mode alone decides: a token with only PROJECT_DIRECT_READ has no audience level, and reads
 * messages with their number masked and no text.
 */
function refuseBlocked(principal: Principal): void {
  if (dataModeOf(principal) === 'blocked') throw new ForbiddenException(CONTACT_DATA_BLOCKED);
}

@ApiTags('sms')
@ApiParam({ name: 'project', description: 'project UID' })
@ApiPostgresUnavailable()
@Controller('v1/project/:project/channel/sms/sms')
export class SmsController {
  constructor(
    private readonly sendDirect: SendDirectSms,
    private readonly getSms: GetSms,
    private readonly listSms: ListSms,
  ) {}

  @Get()
  @ApiListOperation({
    summary: 'List direct SMS (message history)',
    description: 'Newest first unless `_sort` says otherwise. `audienceId` is the contact as it is now: a merged contact\'s messages include those sent to the contacts merged into it, found by its id or theirs (ADR 0159). The text and the number in clear only for tokens whose dataPolicy.mayReadPii is true (else `text` null, number masked); neither is filterable. Needs PROJECT_DIRECT_READ; a blocked project is refused (403).',
    resource: SMS_FIELDS,
    schema: listEnvelope(SmsReadEntity, 'SmsMessagePage'),
    page: 'a page of messages',
  })
  list(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @ListQueryString() queryString: string) {
    const project = projectOf(principal, projectUid);
    refuseBlocked(principal);
    return this.listSms.execute({ projectId: project.id, queryString, mayReadPii: dataPolicy(dataModeOf(principal), principal).mayReadPii });
  }

  @Get(':smsId')
  @ApiOperation({ summary: 'Read a direct SMS and its status history', description: 'The text and the number in clear only for tokens whose dataPolicy.mayReadPii is true (else `text` null, number masked). Needs PROJECT_DIRECT_READ; a blocked project is refused (403).' })
  @ApiParam({ name: 'smsId', description: 'SMS id' })
  @ApiSuccess(200, SmsReadResponse, 'the message')
  @ApiErrors(401, 403, 404, 429)
  read(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @Param('smsId') smsId: string) {
    const project = projectOf(principal, projectUid);
    refuseBlocked(principal);
    return this.getSms.execute({ projectId: project.id, smsId, mayReadPii: dataPolicy(dataModeOf(principal), principal).mayReadPii });
  }

  @Post('direct/:sender/:target')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Send one direct (triggered) SMS',
    description:
      '`sender`: a sender id or `default` (the project\'s defaultSmsSender). `target`: an audience contact id or a URL-encoded phone (E.164, or national in the project locale\'s country). The answer comes once the message is stored; delivery follows (statuses on `meld.sms-status.v1`). Refusals send nothing: 422 `details.reason` is one of `opted_out`, `suppressed` (the number is on the suppression list of the project, ADR 0361), `no_phone`, `sender_inactive`, `country_not_accepted`, `insufficient_funds`, `idempotency_key_reused`. An `Idempotency-Key` makes a retry return the first answer and send once. Needs PROJECT_DIRECT_WRITE.',
  })
  @ApiParam({ name: 'sender', description: 'sender id, or `default`' })
  @ApiParam({ name: 'target', description: 'audience contact id, or a URL-encoded phone number' })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: `at most ${MAX_IDEMPOTENCY_KEY} characters; unique per project` })
  @ApiSuccess(201, DirectSmsCreated, "the message, `enqueued`: its initial status, answered here and not sent to the organization's delivery-report webhook, which reports each later change (ADR 0351)")
  @ApiError(400, 'invalid body (`details.fields`), target that is neither a contact id nor a valid phone, or a bad Idempotency-Key')
  @ApiError(422, 'not sendable now: `details.reason`')
  @ApiRetryLater('the send queue (ADR 0284) or Postgres (ADR 0360) did not answer in time: nothing was stored or charged; retry after `Retry-After` seconds')
  @ApiErrors(401, 403, 404, 429)
  send(
    @CurrentPrincipal() principal: Principal,
    @Param('project') projectUid: string,
    @Param('sender') sender: string,
    @Param('target') target: string,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Body({ schema: DirectSmsBody }) body: unknown,
  ) {
    const project = projectOf(principal, projectUid);
    const { text } = parseInput(DirectSmsBody, body);
    const key = parseInput(DirectSmsHeaders, { 'Idempotency-Key': idempotencyKey }, 'headers')['Idempotency-Key'];
    return this.sendDirect.execute({ projectId: project.id, organizationId: project.organizationId, sender, target, text, idempotencyKey: key });
  }
}
