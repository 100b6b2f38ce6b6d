import { CurrentPrincipal, type Principal, projectOf } from '@meld/auth';
import { ApiPostgresUnavailable, ApiError, ApiErrors, ApiOperation, ApiParam, ApiSuccess, ApiTags } from '@meld/api';
import { Controller, Get, Param } from '@nestjs/common';
import { ContactReadSchema } from './contact-read.schema';
import { FindContact } from './usecases/find-contact/find-contact.usecase';

const CONTACT_DESCRIPTION =
  'The audience contact as the caller may see it: Default (`PROJECT_AUDIENCE_READ`) id, `_user_id` and the name; Basic adds phone, email, country and booleans; Full everything, with `_datasources` and `_ds_contact_ids`. Anonymized mode masks phone and email; blocked mode leaves `{ id }`. When several contacts match, the most recently updated is returned and `metadata.matches` counts them.';

@ApiTags('audience')
@ApiParam({ name: 'project', description: 'project UID' })
@ApiPostgresUnavailable()
@Controller('v1/project/:project/audience')
export class ContactsController {
  constructor(private readonly findContact: FindContact) {}

  @Get('search/phone/:phone')
  @ApiOperation({ summary: 'Find an audience contact by phone', description: `${CONTACT_DESCRIPTION} The phone is normalised to E.164 with the project locale's country as default.` })
  @ApiParam({ name: 'phone', description: 'phone number, URL-encoded (`+` as `%2B`)' })
  @ApiSuccess(200, ContactReadSchema, 'the audience contact')
  @ApiError(400, 'the phone does not parse as a valid number')
  @ApiError(403, 'the token lacks a scope, or may not search by personal data (`dataPolicy.mayReadPii` false)')
  @ApiErrors(401, 404, 429)
  byPhone(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @Param('phone') phone: string) {
    return this.find(principal, projectUid, 'phone', phone);
  }

  @Get('search/email/:userEmail')
  @ApiOperation({ summary: 'Find an audience contact by email', description: `${CONTACT_DESCRIPTION} The email is trimmed and lower-cased.` })
  @ApiParam({ name: 'userEmail', description: 'email address' })
  @ApiSuccess(200, ContactReadSchema, 'the audience contact')
  @ApiError(403, 'the token lacks a scope, or may not search by personal data (`dataPolicy.mayReadPii` false)')
  @ApiErrors(401, 404, 429)
  byEmail(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @Param('userEmail') email: string) {
    return this.find(principal, projectUid, 'email', email);
  }

  @Get('user/:userId')
  @ApiOperation({ summary: 'Read the audience contact of a user id', description: CONTACT_DESCRIPTION })
  @ApiParam({ name: 'userId', description: '`_user_id` of one of its source contacts' })
  @ApiSuccess(200, ContactReadSchema, 'the audience contact')
  @ApiError(403, "the token lacks a scope, or the user id holds a phone number or an email that the project's data mode (anonymized or blocked) does not show")
  @ApiErrors(401, 404, 429)
  byUser(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @Param('userId') userId: string) {
    return this.find(principal, projectUid, 'user', userId);
  }

  private find(principal: Principal, projectUid: string, by: 'phone' | 'email' | 'user', value: string) {
    const project = projectOf(principal, projectUid);
    return this.findContact.execute({ principal, organizationId: project.organizationId, projectId: project.id, by, value });
  }
}
