import { Z95, estimateShare, estimateTotal, wilsonInterval } from './estimators';

describe('estimators (ADR 0162)', () => {
  it('is exact when nothing is sampled', () => {
    expect(estimateShare(7, 10, 10, false)).toEqual({ share: 0.7, shareError: 0, count: 7, countError: 0 });
    expect(wilsonInterval(7, 10, 10, false)).toEqual([0.7, 0.7]);
  });

  it('projects a sampled share on the denominator with the normal half-width and finite-population correction', () => {
    const e = estimateShare(300, 1000, 10_000, true);
    expect(e.count).toBe(3000);
    const textbook = Z95 * Math.sqrt((0.3 * 0.7) / 1000) * Math.sqrt(1 - 0.1);
    expect(e.shareError).toBeCloseTo(textbook, 10);
    expect(e.countError).toBe(Math.ceil(textbook * 10_000));
  });

  it('keeps a Wilson interval inside [0, 1] and wide enough at 0 observed', () => {
    const [lo, hi] = wilsonInterval(0, 500, 100_000, true);
    expect(lo).toBe(0);
    expect(hi).toBeGreaterThan(0.005);
    const [a, b] = wilsonInterval(150, 1000, 100_000, true);
    expect(a).toBeLessThan(0.15);
    expect(b).toBeGreaterThan(0.15);
  });

  it('reads nothing scanned as nothing known', () => {
    expect(estimateShare(0, 0, 0, true)).toEqual({ share: 0, shareError: 0, count: 0, countError: 0 });
  });

  it('estimates a total over sampled contacts with the variance of their per-contact sums', () => {
    expect(estimateTotal(42, 900, 10, 10, false)).toEqual({ count: 42, countError: 0 });
    // 1,000 sampled contacts of 10,000: 10 hold 40 events each, the rest none.
    const clustered = estimateTotal(400, 10 * 40 * 40, 1000, 10_000, true);
    expect(clustered.count).toBe(4000);
    const mean = 0.4;
    const s2 = (16_000 - 1000 * mean * mean) / 999;
    expect(clustered.countError).toBe(Math.ceil(Z95 * 10_000 * Math.sqrt((0.9 * s2) / 1000)));
    // The same 400 events spread over 400 contacts: far narrower, and close to the binomial on contacts.
    const spread = estimateTotal(400, 400, 1000, 10_000, true);
    expect(spread.countError * 5).toBeLessThan(clustered.countError);
    expect(spread.countError).toBeGreaterThanOrEqual(estimateShare(400, 1000, 10_000, true).countError);
    expect(spread.countError).toBeLessThan(estimateShare(400, 1000, 10_000, true).countError * 1.01);
  });
});
