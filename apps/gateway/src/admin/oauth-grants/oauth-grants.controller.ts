import { ApiPostgresUnavailable, ApiTags, envelope } from '@meld/api';
import { Controller, Delete, Get, Param, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { AdminOperation } from '../http/admin-docs';
import { AdminTokenGuard } from '../http/admin-token.guard';
import { ListOAuthGrants, OAuthGrantSchema } from './usecases/list-oauth-grants/list-oauth-grants.usecase';
import { DeleteOAuthClient } from './usecases/delete-oauth-client/delete-oauth-client.usecase';
import { RevokeOAuthGrant } from './usecases/revoke-oauth-grant/revoke-oauth-grant.usecase';

@ApiTags('admin')
@UseGuards(AdminTokenGuard)
@ApiPostgresUnavailable()
@Controller('admin/v1')
export class OAuthGrantsController {
  constructor(
    private readonly listGrants: ListOAuthGrants,
    private readonly revokeGrant: RevokeOAuthGrant,
    private readonly deleteClient: DeleteOAuthClient,
  ) {}

  @Get('organizations/:org/oauth-grants')
  @AdminOperation("List the OAuth grants of an organization's users (client, user, scopes, projects)", 200, envelope(z.array(OAuthGrantSchema), z.object({ count: z.int() })), [404])
  list(@Param('org') organizationId: string) {
    return this.listGrants.execute({ organizationId });
  }

  @Delete('oauth-grants/:grantId')
  @AdminOperation('Revoke an OAuth grant (idempotent): its refresh tokens and every access token issued from it end; gateways forget them at once', 204, null, [404, 503])
  async revoke(@Param('grantId') grantId: string): Promise<void> {
    await this.revokeGrant.execute({ grantId });
  }

  @Delete('oauth-clients/:clientId')
  @AdminOperation('Delete an OAuth client with its grants: every token it holds ends, gateways forget them at once; it must register again (a Client ID Metadata Document client stays struck off)', 204, null, [404, 503])
  async remove(@Param('clientId') clientId: string): Promise<void> {
    await this.deleteClient.execute({ clientId });
  }
}
