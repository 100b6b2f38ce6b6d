import { TOKEN_REVOKED_CHANNEL } from '@meld/auth';
import { Injectable, ServiceUnavailableException } from '@nestjs/common';
import { found } from '../../../shared/found';
import { TenancyEvents } from '../../../shared/tenancy-events';
import { TokensRepository } from '../../tokens.repository';

export interface RevokeTokenCommand {
  tokenId: string;
}

/**
 * Revocation is the database write; the Redis message makes every gateway forget the
 * token now rather than at its cache TTL. If Redis is down the revocation still holds
 * (the TTL bounds the delay) but we answer 503 so the operator retries: DELETE is
 * idempotent and a retry publishes again.
 */
@Injectable()
export class RevokeToken {
  constructor(
    private readonly tokens: TokensRepository,
    private readonly events: TenancyEvents,
  ) {}

  async execute({ tokenId }: RevokeTokenCommand): Promise<void> {
    const token = found(await this.tokens.revoke(tokenId), 'token', tokenId);
    if (!(await this.events.publish(TOKEN_REVOKED_CHANNEL, token.id))) {
      throw new ServiceUnavailableException('token revoked, but the gateways could not be told at once (Redis unavailable): retry the DELETE');
    }
  }
}
