import type { ScenarioResult } from './context';
import { formatRatio, ratio } from './stats';
import { formatTable } from './table';

/** The printed result: one row per measurement, peak RSS per process, ratio to the baseline. */
export function formatResult(result: ScenarioResult): string {
  // The bench process and the broker get columns; other watched processes (the apps of
  // .stack/apps.json) get a table of their own, or the main one would not fit a terminal.
  const allProcs = [...new Set(result.rows.flatMap((r) => Object.keys(r.peakRssMb)))];
  const procNames: string[] = allProcs.filter((p) => p === 'bench' || p === 'kafka');
  const otherProcs = allProcs.filter((p) => !procNames.includes(p));
  const byName = new Map(result.rows.map((r) => [r.name, r]));
  const withCpu = result.rows.some((r) => r.cpuUsPerOp !== undefined);
  const headers = [
    'measurement',
    `throughput (${result.units.throughput})`,
    'p50 ms',
    'p99 ms',
    ...(withCpu ? ['CPU µs/op'] : []),
    ...procNames.map((p) => `peak RSS ${p} MB`),
    'vs baseline',
    'runs',
  ];
  const rows = result.rows.map((r) => {
    const base = r.baseline ? byName.get(r.baseline) : undefined;
    return [
      r.name,
      r.throughput,
      r.p50Ms,
      r.p99Ms,
      ...(withCpu ? [r.cpuUsPerOp ?? Number.NaN] : []),
      ...procNames.map((p) => r.peakRssMb[p] ?? Number.NaN),
      // A row without a throughput (a latency-only figure) is nobody's baseline.
      base ? formatRatio(ratio(r.throughput, base.throughput)) : r.baseline || !Number.isFinite(r.throughput) ? '-' : '(baseline)',
      String(r.runs),
    ];
  });
  const lines = [
    `== ${result.title}`,
    `p50/p99: ${result.units.latency}${result.units.cpu ? `; CPU: ${result.units.cpu}` : ''}; figures are medians over the runs`,
    '',
    formatTable(headers, rows),
  ];
  if (otherProcs.length) {
    const peakOf = (p: string): number => {
      const values = result.rows.map((r) => r.peakRssMb[p]).filter((v) => Number.isFinite(v));
      return values.length ? Math.max(...values) : Number.NaN;
    };
    lines.push('', 'peak RSS of the other watched processes during the runs (MB):', formatTable(['process', 'peak RSS MB'], otherProcs.map((p) => [p, peakOf(p)])));
  }
  if (result.goals?.length) lines.push('');
  for (const goal of result.goals ?? []) {
    const row = byName.get(goal.row);
    const base = row?.baseline ? byName.get(row.baseline) : undefined;
    if (row && base) {
      const r = ratio(row.throughput, base.throughput);
      lines.push(`goal: ${row.name} ≥ ${formatRatio(goal.minRatio)} of ${base.name}: ${formatRatio(r)} ${r >= goal.minRatio ? 'MET' : 'MISSED'}`);
    }
  }
  if (result.notes.length) lines.push('', ...result.notes.map((n) => `- ${n}`));
  return lines.join('\n');
}
