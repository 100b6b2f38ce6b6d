import { Injectable, ServiceUnavailableException } from '@nestjs/common';
import { found } from '../../../shared/found';
import { announceRevokedTokens } from '../../../shared/revoked-tokens';
import { TenancyEvents } from '../../../shared/tenancy-events';
import { OAuthGrantsRepository } from '../../oauth-grants.repository';

/** As a token revocation (RevokeToken): the write, then every gateway told; 503 asks for a retry (idempotent). */
@Injectable()
export class RevokeOAuthGrant {
  constructor(
    private readonly grants: OAuthGrantsRepository,
    private readonly events: TenancyEvents,
  ) {}

  async execute({ grantId }: { grantId: string }): Promise<void> {
    const tokenIds = found(await this.grants.revoke(grantId), 'OAuth grant', grantId);
    if (!(await announceRevokedTokens(this.events, tokenIds))) {
      throw new ServiceUnavailableException('grant revoked, but the gateways could not be told at once (Redis unavailable): retry the DELETE');
    }
  }
}
