import { Injectable, ServiceUnavailableException } from '@nestjs/common';
import { found } from '../../../shared/found';
import { announceRevokedTokens } from '../../../shared/revoked-tokens';
import { TenancyEvents } from '../../../shared/tenancy-events';
import { OAuthGrantsRepository } from '../../oauth-grants.repository';

/** A client struck off (a leaked secret, a malicious app): every token it holds ends at once, as a grant revocation does. */
@Injectable()
export class DeleteOAuthClient {
  constructor(
    private readonly grants: OAuthGrantsRepository,
    private readonly events: TenancyEvents,
  ) {}

  async execute({ clientId }: { clientId: string }): Promise<void> {
    const tokenIds = found(await this.grants.deleteClient(clientId), 'OAuth client', clientId);
    if (!(await announceRevokedTokens(this.events, tokenIds))) {
      throw new ServiceUnavailableException('client deleted, but the gateways could not be told at once (Redis unavailable): its tokens end within the cache TTL');
    }
  }
}
