import { rateLimitUsage } from './rate-limit-usage';

describe('rate-limit usage from the gateway headers', () => {
  it('reads the three headers', () => {
    expect(rateLimitUsage({ 'x-meld-ratelimit-limit': '600', 'x-meld-ratelimit-remaining': '599', 'x-meld-ratelimit-reset': '1790000060' })).toEqual({
      limit: 600,
      remaining: 599,
      reset: 1790000060,
      window: 'minute',
    });
  });

  it('is null when a header is missing or not an integer', () => {
    expect(rateLimitUsage({})).toBeNull();
    expect(rateLimitUsage({ 'x-meld-ratelimit-limit': '600', 'x-meld-ratelimit-remaining': 'x', 'x-meld-ratelimit-reset': '1' })).toBeNull();
    expect(rateLimitUsage({ 'x-meld-ratelimit-limit': '600', 'x-meld-ratelimit-remaining': '1' })).toBeNull();
  });
});
