import { sampleCondition, samplingPlan } from './sampling';

describe('sampling bands (system design §4)', () => {
  it.each([
    [0, false, 100],
    [9_999, false, 100],
    [10_000, true, 75],
    [19_999, true, 75],
    [20_000, true, 50],
    [49_999, true, 50],
    [50_000, true, 20],
    [199_999, true, 20],
    // "50,000 to 200,000: 20%; above 200,000: 15%": 200,000 itself is in the 20% band.
    [200_000, true, 20],
    [200_001, true, 15],
    [5_000_000, true, 15],
  ])('%i contacts: applied %s, %i buckets', (size, applied, buckets) => {
    expect(samplingPlan(size)).toMatchObject({ applied, buckets, fraction: buckets / 100, minReliableCount: 30 });
  });

  it('samples the first buckets of the hash as one range of the sorting key', () => {
    expect(sampleCondition(samplingPlan(5))).toBeUndefined();
    expect(sampleCondition(samplingPlan(300_000))!.text).toBe(`audience_hash < ${(2n ** 64n / 100n) * 15n}`);
  });
});
