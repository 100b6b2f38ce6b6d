import { z } from 'zod';

/** The gateway's count for this call's bucket (this data source and endpoint), forwarded in x-meld-ratelimit-*. */
export const RateLimitUsageSchema = z
  .object({
    limit: z.int().describe('requests allowed per window'),
    remaining: z.int().describe('requests left in the current window'),
    reset: z.int().describe('Unix time (seconds) when the window resets'),
    window: z.literal('minute'),
  })
  .meta({ id: 'RateLimitUsage' });
export type RateLimitUsage = z.infer<typeof RateLimitUsageSchema>;

type Headers = Record<string, string | string[] | undefined>;

/** Null when the request did not come through a rate-limiting gateway (or a header is not a number). */
export function rateLimitUsage(headers: Headers): RateLimitUsage | null {
  const read = (name: string) => {
    const raw = headers[`x-meld-ratelimit-${name}`];
    const n = Number(Array.isArray(raw) ? raw[0] : raw);
    return raw !== undefined && Number.isInteger(n) ? n : null;
  };
  const [limit, remaining, reset] = [read('limit'), read('remaining'), read('reset')];
  return limit === null || remaining === null || reset === null ? null : { limit, remaining, reset, window: 'minute' };
}
