import { costUnits, fromUnits, toUnits } from './money';

describe('money at the funds scale', () => {
  it('reads numeric text exactly', () => {
    expect(toUnits('1.0000')).toBe(10_000n);
    expect(toUnits('42.5')).toBe(425_000n);
    expect(toUnits('0')).toBe(0n);
    expect(toUnits('0.00125')).toBe(13n);
    expect(toUnits('0.00124')).toBe(12n);
  });

  it('keeps the sign of funds below zero, a fraction of a unit too', () => {
    expect(toUnits('-0.5000')).toBe(-5_000n);
    expect(toUnits('-1.5000')).toBe(-15_000n);
    expect(toUnits('-0.00005')).toBe(-1n);
    expect(toUnits('-0')).toBe(0n);
  });

  it('25 messages at 0.04 fit in 1 exactly (a float sum would not)', () => {
    const cost = costUnits('0.04000', 1);
    expect(cost * 25n).toBe(toUnits('1.0000'));
  });

  it('multiplies by the parts before rounding', () => {
    expect(costUnits('0.10000', 2)).toBe(2_000n);
    expect(costUnits('0.00125', 3)).toBe(38n);
    expect(fromUnits(costUnits('0.04', 3))).toBe('0.1200');
  });
});
