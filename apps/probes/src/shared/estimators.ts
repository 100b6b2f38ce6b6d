/**
 * Estimators of sampled figures (ADR 0162, ADR 0221). The sample is the contacts of a fixed share
 * of hash buckets: a simple random sample of n of the N contacts of the denominator, without
 * replacement. A share p̂ = y / n is projected on N; its 95% half-width is the farther side of
 * the Wilson score interval with the finite-population correction (effective size n / (1 − n/N)),
 * scaled by N for a count. Unsampled figures are exact: half-width 0.
 */

export const Z95 = 1.959964;

export interface ShareEstimate {
  /** p̂ = observed / scanned (0 when nothing was scanned). */
  share: number;
  /** 95% half-width of the share. */
  shareError: number;
  /** p̂ × N, rounded. */
  count: number;
  /** 95% half-width of the count, rounded up. */
  countError: number;
}

/** `observed` of `scanned` sampled contacts, projected on a denominator of `population` contacts. */
export function estimateShare(observed: number, scanned: number, population: number, sampled: boolean): ShareEstimate {
  if (scanned <= 0) return { share: 0, shareError: 0, count: 0, countError: 0 };
  const share = observed / scanned;
  if (!sampled) return { share, shareError: 0, count: observed, countError: 0 };
  // The normal interval z·sqrt(p̂(1−p̂)/n·(1−n/N)) covered 94.7% of listed values observed a few
  // dozen times (ADR 0221): symmetric, it is too short on the side away from 0. The Wilson side
  // matches it for common values and widens only where the normal one falls short.
  const [low, high] = wilsonInterval(observed, scanned, population, sampled);
  const shareError = Math.max(share - low, high - share);
  return { share, shareError, count: Math.round(share * population), countError: Math.ceil(shareError * population) };
}

/**
 * Wilson score interval of a share (95%), with the same finite-population correction: unlike the
 * normal interval it stays inside [0, 1] and does not collapse to zero width when a value was
 * observed 0 or n times, so it is what `fillRateInterval` reports.
 */
export function wilsonInterval(observed: number, scanned: number, population: number, sampled: boolean): [number, number] {
  if (scanned <= 0) return [0, 1];
  const p = observed / scanned;
  if (!sampled) return [p, p];
  const fpc = population > 0 ? Math.max(0, 1 - scanned / population) : 1;
  const n = scanned / Math.max(fpc, 1e-9);
  const z2 = Z95 * Z95;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (Z95 * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/** Rounded to `digits` decimals. */
export const round = (x: number, digits = 4): number => Math.round(x * 10 ** digits) / 10 ** digits;

export interface TotalEstimate {
  /** N·ȳ, rounded. */
  count: number;
  /** 95% half-width, rounded up. */
  countError: number;
}

/**
 * A total over contacts from a sample of them (ADR 0166, ADR 0247): each of the n sampled contacts
 * of N contributes y_i (e.g. its events carrying a value), and the sample gives Σy and Σy². The
 * total is T = N·ȳ; the textbook 95% half-width h = z·N·sqrt((1 − n/N)·s²/n) uses the variance s²
 * of the per-contact sums, so the events of one contact count as one draw, never as independent
 * ones. The half-width reported is the far side of the score interval of the total's effective
 * count k = (z·T/h)²: h·(r/2 + sqrt(1 + r²/4)) with r = h/T.
 */
export function estimateTotal(sum: number, sumOfSquares: number, scanned: number, population: number, sampled: boolean): TotalEstimate {
  if (!sampled) return { count: sum, countError: 0 };
  if (scanned <= 0) return { count: 0, countError: 0 };
  const mean = sum / scanned;
  const variance = scanned > 1 ? Math.max(0, (sumOfSquares - scanned * mean * mean) / (scanned - 1)) : 0;
  const fpc = population > 0 ? Math.max(0, 1 - scanned / population) : 1;
  const total = mean * population;
  const textbook = Z95 * population * Math.sqrt((fpc * variance) / scanned);
  // A value carried mostly by a few heavy contacts has a right-skewed estimate: a sample that
  // drew fewer of them than usual reads low AND narrow, and the symmetric interval missed the
  // truth for 5-7% of such values (ADR 0247). The score side widens exactly there (r large) and
  // never past 2.4× the textbook width: Σy² ≤ (Σy)² bounds r by z.
  const r = total > 0 ? textbook / total : 0;
  return { count: Math.round(total), countError: Math.ceil(textbook * (r / 2 + Math.sqrt(1 + (r * r) / 4))) };
}
