/**
 * Where a latency phase's slow requests spent their time, from the apps' own Prometheus
 * histograms (libs/platform HTTP durations, libs/kafka produce durations, prom-client's GC
 * durations): scrape before and after the phase, and count the observations above a bound in
 * the difference. A client-side p99 alone cannot say whether the gateway, the app behind it or
 * the broker made a request slow.
 */
type Scrape = Map<string, number>;

export async function scrapeMetrics(url: string): Promise<Scrape> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const out: Scrape = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

/**
 * For each histogram series matching `metric` and `labelMatch` in `after − before`:
 * "<n> of <count> above <bound> s". `bound` must be one of the histogram's buckets.
 */
export function overBound(before: Scrape, after: Scrape, metric: string, labelMatch: string, bound: number): string[] {
  // Label order differs between a histogram's _count and _bucket lines (le first): compare sorted label sets.
  const labelKey = (series: string, prefix: string): string | null => {
    if (!series.startsWith(`${prefix}{`)) return null;
    return (series.slice(prefix.length + 1, -1).match(/\w+="(?:[^"\\]|\\.)*"/g) ?? []).sort().join(',');
  };
  const bucket = (scrape: Scrape, key: string): number => {
    for (const [series, value] of scrape) if (labelKey(series, `${metric}_bucket`) === key) return value;
    return 0;
  };
  const lines: string[] = [];
  for (const [series, total] of after) {
    const key = labelKey(series, `${metric}_count`);
    if (key === null || !series.includes(labelMatch)) continue;
    const count = total - (before.get(series) ?? 0);
    if (count <= 0) continue;
    const le = [...key.split(','), `le="${bound}"`].sort().join(',');
    const within = bucket(after, le) - bucket(before, le);
    lines.push(`${count - within} of ${count} above ${bound * 1000} ms {${key}}`);
  }
  return lines;
}

/** Sum of the series of `metric` (a counter, gauge or a histogram's _sum / _count) matching `labelMatch`, after − before. */
export function delta(before: Scrape | null, after: Scrape, metric: string, labelMatch = ''): number {
  let total = 0;
  for (const [series, value] of after) {
    if ((series === metric || series.startsWith(`${metric}{`)) && series.includes(labelMatch)) total += value - (before?.get(series) ?? 0);
  }
  return total;
}
