/** Small statistics for benchmark figures; no dependency, so the numbers are easy to audit. */

/** Nearest-rank percentile (p in 0..100) of unsorted values; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** `count` events over `ms` milliseconds, per second; 0 over no time. */
export function rate(count: number, ms: number): number {
  return ms > 0 ? (count * 1000) / ms : 0;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** candidate / baseline; > 1 means the candidate is faster for throughputs. */
export function ratio(candidate: number, baseline: number): number {
  return baseline === 0 ? Number.NaN : candidate / baseline;
}

export function formatRatio(r: number): string {
  return Number.isFinite(r) ? `${(r * 100).toFixed(1)}%` : '-';
}

/** Median of each numeric field over repeated runs of the same measurement. */
export function medianOf<T extends Record<string, number>>(runs: readonly T[]): T {
  const out: Record<string, number> = {};
  for (const key of Object.keys(runs[0] ?? {})) out[key] = median(runs.map((r) => r[key]));
  return out as T;
}
