import { Z95, estimateShare, estimateTotal, wilsonInterval } from './estimators';

describe('estimators (ADR 0162)', () => {
  it('is exact when nothing is sampled', () => {
    expect(estimateShare(7, 10, 10, false)).toEqual({ share: 0.7, shareError: 0, count: 7, countError: 0 });
    expect(wilsonInterval(7, 10, 10, false)).toEqual([0.7, 0.7]);
  });

  it('projects a sampled share on the denominator with the far side of the Wilson interval, finite-population corrected (ADR 0221)', () => {
    const e = estimateShare(300, 1000, 10_000, true);
    expect(e.count).toBe(3000);
    const [low, high] = wilsonInterval(300, 1000, 10_000, true);
    expect(e.shareError).toBeCloseTo(Math.max(0.3 - low, high - 0.3), 12);
    expect(e.countError).toBe(Math.ceil(e.shareError * 10_000));
    // For a common value it is the normal half-width to within a few percent.
    const normal = Z95 * Math.sqrt((0.3 * 0.7) / 1000) * Math.sqrt(1 - 0.1);
    expect(e.shareError).toBeGreaterThanOrEqual(normal);
    expect(e.shareError).toBeLessThan(normal * 1.03);
  });

  it('widens the half-width of a value observed a few times on the side away from 0, where the normal one falls short', () => {
    const e = estimateShare(4, 30_000, 200_000, true);
    const normal = Z95 * Math.sqrt(((4 / 30_000) * (1 - 4 / 30_000)) / 30_000) * Math.sqrt(1 - 0.15);
    expect(e.shareError).toBeGreaterThan(normal * 1.5);
    expect(e.shareError).toBeLessThan(normal * 3);
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
    const textbook = Z95 * 10_000 * Math.sqrt((0.9 * s2) / 1000);
    // The far side of the score interval of the effective count (ADR 0247): r = textbook / total.
    const r = textbook / 4000;
    expect(clustered.countError).toBe(Math.ceil(textbook * (r / 2 + Math.sqrt(1 + (r * r) / 4))));
    expect(clustered.countError).toBeLessThan(textbook * 1.4);
    // The same 400 events spread over 400 contacts: far narrower, and close to the binomial on contacts.
    const spread = estimateTotal(400, 400, 1000, 10_000, true);
    expect(spread.countError * 5).toBeLessThan(clustered.countError);
    const binomialOnContacts = Math.ceil(Z95 * 10_000 * Math.sqrt((0.4 * 0.6 * 0.9) / 1000));
    expect(spread.countError).toBeGreaterThanOrEqual(binomialOnContacts);
    expect(spread.countError).toBeLessThan(binomialOnContacts * 1.06);
  });

  it('never reports more than 2.4× the textbook half-width of a total, even for a value seen on one contact', () => {
    const one = estimateTotal(500, 500 * 500, 1000, 1_000_000, true);
    const mean = 0.5;
    const textbook = Z95 * 1_000_000 * Math.sqrt(((1 - 0.001) * (250_000 - 1000 * mean * mean)) / 999 / 1000);
    expect(one.countError).toBeGreaterThan(textbook * 2);
    expect(one.countError).toBeLessThanOrEqual(Math.ceil(textbook * 2.38));
  });
});
