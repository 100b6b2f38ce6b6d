import fc from 'fast-check';
import { backoffDelay } from './backoff';

describe('backoffDelay', () => {
  const options = { maxAttempts: 5, initialDelayMs: 100, maxDelayMs: 1000 };

  it('doubles the ceiling per failed attempt up to the maximum', () => {
    const top = (): number => 0.999999;
    expect(backoffDelay(1, options, top)).toBe(99);
    expect(backoffDelay(2, options, top)).toBe(199);
    expect(backoffDelay(3, options, top)).toBe(399);
    expect(backoffDelay(5, options, top)).toBe(999);
    expect(backoffDelay(30, options, top)).toBe(999);
  });

  it('jitters over [0, ceiling) (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.double({ min: 0, max: 0.9999999, noNaN: true }), (attempt, r) => {
        const d = backoffDelay(attempt, options, () => r);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThan(Math.min(1000, 100 * 2 ** (attempt - 1)));
      }),
    );
  });
});
