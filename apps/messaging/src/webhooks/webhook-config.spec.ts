import { retryDelayMs } from './webhook-config';

describe('retryDelayMs (ADR 0155)', () => {
  it('doubles from 1 s, capped at an hour, within ±20 %', () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 10, 12, 13, 30].map((n) => retryDelayMs(n, mid))).toEqual([1000, 2000, 4000, 8000, 512_000, 2_048_000, 3_600_000, 3_600_000]);
    expect(retryDelayMs(1, () => 0)).toBe(800);
    expect(retryDelayMs(1, () => 0.999999)).toBe(1200);
  });

  it('retries 35 times within the 24 h window (13 in the first 2.3 h, then hourly)', () => {
    let elapsed = 0;
    let attempts = 0;
    while (elapsed < 86_400_000) elapsed += retryDelayMs(++attempts, () => 0.5);
    expect(attempts).toBe(35);
  });
});
