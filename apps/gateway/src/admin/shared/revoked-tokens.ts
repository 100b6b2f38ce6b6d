import { TOKEN_REVOKED_CHANNEL } from '@meld/auth';
import type { TenancyEvents } from './tenancy-events';

/** Tells every gateway to forget these tokens now rather than at their cache TTL; false when Redis could not be told. */
export async function announceRevokedTokens(events: TenancyEvents, tokenIds: readonly string[]): Promise<boolean> {
  const told = await Promise.all(tokenIds.map((id) => events.publish(TOKEN_REVOKED_CHANNEL, id)));
  return told.every(Boolean);
}
