import { decimalColumn } from './decimal';

describe('decimalColumn: what a numeric(precision, scale) column can store without rounding', () => {
  const price = decimalColumn(10, 5, { min: 0 });

  it('takes every value with at most `scale` decimals up to the column maximum', () => {
    for (const ok of [0, 0.00001, 0.045, 0.1, 0.3, 1.23456, 99999.99999, 12345]) expect([ok, price.safeParse(ok).success]).toEqual([ok, true]);
  });

  it('refuses more decimals (Postgres would round them) and more integer digits (Postgres would overflow)', () => {
    const refused = (n: number) => price.safeParse(n).error?.issues[0]?.message;
    expect(refused(0.000001)).toBe('must have at most 5 decimal places');
    expect(refused(0.123456)).toBe('must have at most 5 decimal places');
    expect(refused(1e-7)).toBe('must have at most 5 decimal places');
    expect(refused(100000)).toMatch(/99999\.99999/);
    expect(refused(99999.999999)).toBeDefined();
    expect(refused(-0.01)).toBeDefined();
  });
});
