import { Injectable, ServiceUnavailableException } from '@nestjs/common';
import { found } from '../../../shared/found';
import { announceRevokedTokens } from '../../../shared/revoked-tokens';
import { TenancyEvents } from '../../../shared/tenancy-events';
import { UsersRepository } from '../../users.repository';

/**
 * Revoking a dashboard user deletes it: its consent sessions, OAuth grants and every token
 * issued in its name go with it (foreign keys ON DELETE CASCADE), and the gateways are told
 * to forget those tokens now. A retry after a 503 finds no user (404): the tokens are gone
 * from Postgres already and the gateways' cache TTL bounds the rest.
 */
@Injectable()
export class DeleteUser {
  constructor(
    private readonly users: UsersRepository,
    private readonly events: TenancyEvents,
  ) {}

  async execute({ userId }: { userId: string }): Promise<void> {
    const tokenIds = found(await this.users.delete(userId), 'user', userId);
    if (!(await announceRevokedTokens(this.events, tokenIds))) {
      throw new ServiceUnavailableException('user deleted, but the gateways could not be told at once (Redis unavailable): its tokens end within the gateway cache TTL');
    }
  }
}
