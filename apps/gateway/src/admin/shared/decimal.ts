import { z } from 'zod';

/**
 * A JSON number stored in a Postgres `numeric(precision, scale)` column, refused (400 naming
 * the field) where Postgres would round it or overflow: a value with more decimals than `scale`
 * would be rounded silently (a price of 0.000001 stored as 0, a free SMS), and one with more
 * integer digits than `precision - scale` is Postgres' 22003, a 500 (ADR 0014). `min` and `max`
 * narrow the column's own range.
 */
export function decimalColumn(precision: number, scale: number, { min, max }: { min?: number; max?: number } = {}) {
  const largest = Number(`${'9'.repeat(precision - scale)}.${'9'.repeat(scale)}`);
  return (
    z
      .number()
      .min(Math.max(min ?? -largest, -largest))
      .max(Math.min(max ?? largest, largest))
      // The double nearest to a decimal of `scale` places prints back as that decimal, so the
      // test is exact for every value a JSON body can carry with at most `scale` decimals.
      .refine((n) => Number(n.toFixed(scale)) === n, `must have at most ${scale} decimal places`)
  );
}
