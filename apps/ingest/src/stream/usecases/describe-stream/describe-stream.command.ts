import type { Principal } from '@meld/auth';
import type { Scope } from '@meld/contracts';
import type { RateLimitUsage } from '../../rate-limit-usage';
import type { StreamCommand } from '../../stream.command';

export interface DescribeStreamCommand extends StreamCommand {
  tokenKind: Principal['kind'];
  scopes: Scope[];
  /** From the gateway's forwarded x-meld-ratelimit-* headers; null when called otherwise. */
  rateLimit: RateLimitUsage | null;
}
