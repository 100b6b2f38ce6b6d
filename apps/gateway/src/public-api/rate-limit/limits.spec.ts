import { DEFAULT_RATE_LIMITS, resolveRateLimits } from './limits';

describe('rate-limit configuration', () => {
  it('defaults to the per-plan, per-minute figures of the design', () => {
    expect(DEFAULT_RATE_LIMITS.ingest.perPlan).toEqual({ s: 600, m: 3000, l: 12000, xl: 60000 });
    expect(DEFAULT_RATE_LIMITS.large.perPlan).toEqual({ s: 120, m: 600, l: 1200, xl: 3000 });
    expect(DEFAULT_RATE_LIMITS.standard.perPlan).toMatchObject({ s: 60, xl: 1200 });
    expect(DEFAULT_RATE_LIMITS.probes.perPlan).toEqual({ s: 6, m: 12, l: 30, xl: 60 });
    expect(Object.values(DEFAULT_RATE_LIMITS).every((c) => c.windowMs === 60_000)).toBe(true);
    expect(resolveRateLimits(undefined)).toBe(DEFAULT_RATE_LIMITS);
  });

  it('merges MELD_RATE_LIMITS over the defaults: limit for every plan, a plan key for one', () => {
    const limits = resolveRateLimits('{"large":{"limit":5,"xl":50,"windowSeconds":2},"anonymous":{"limit":3}}');
    expect(limits.large).toEqual({ windowMs: 2000, perPlan: { s: 5, m: 5, l: 5, xl: 50 } });
    expect(limits.anonymous.perPlan.s).toBe(3);
    expect(limits.ingest).toEqual(DEFAULT_RATE_LIMITS.ingest);
  });

  it('refuses a bad override with a message naming what is wrong', () => {
    expect(() => resolveRateLimits('{')).toThrow('MELD_RATE_LIMITS: not valid JSON');
    expect(() => resolveRateLimits('{"huge":{"limit":1}}')).toThrow(/MELD_RATE_LIMITS: .*huge/);
    expect(() => resolveRateLimits('{"large":{"s":0}}')).toThrow(/MELD_RATE_LIMITS: large\.s/);
  });
});
