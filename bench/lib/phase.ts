import type { BenchRow } from './context';
import { median } from './stats';
import { formatNumber } from './table';

/** What one measured phase of a scenario gives (one round). */
export interface Phase {
  /** Operations per second. */
  perS: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU µs per operation, by process. */
  cpu: Record<string, number>;
  /** Peak RSS MB, by process. */
  rssMb: Record<string, number>;
}

/** CPU µs by process over a phase → µs per operation. */
export function perOp(cpuUs: Record<string, number>, ops: number): Record<string, number> {
  return Object.fromEntries(Object.entries(cpuUs).map(([k, v]) => [k, v / ops]));
}

/** The sum of the named processes' figures (a missing one counts 0). */
export function sumOf(values: Record<string, number>, names: readonly string[]): number {
  return names.reduce((n, k) => n + (values[k] ?? 0), 0);
}

/** One table row from the rounds of a phase: medians, the CPU of `cpuOf` processes, the highest RSS. */
export function phaseRow(name: string, rounds: readonly Phase[], cpuOf: readonly string[], baseline?: string): BenchRow {
  const med = (pick: (p: Phase) => number) => median(rounds.map(pick));
  return {
    name,
    throughput: med((p) => p.perS),
    p50Ms: med((p) => p.p50),
    p99Ms: med((p) => p.p99),
    cpuUsPerOp: cpuOf.length ? med((p) => sumOf(p.cpu, cpuOf)) : Number.NaN,
    peakRssMb: Object.fromEntries(Object.keys(rounds[0].rssMb).map((k) => [k, Math.max(...rounds.map((p) => p.rssMb[k] ?? Number.NaN))])),
    baseline,
    runs: rounds.length,
  };
}

/** `label: a 1.2, b 3.4` for the notes: what each process spent per operation. */
export function cpuBreakdown(label: string, cpu: Record<string, number>): string {
  const parts = Object.entries(cpu)
    .filter(([, v]) => Number.isFinite(v))
    .map(([k, v]) => `${k} ${formatNumber(v)}`);
  return `${label}: ${parts.join(', ')}`;
}

/** The MELD_* variables a scenario needs, or an error naming the missing ones. */
export function requireEnv(names: readonly string[], scenario: string): Record<string, string> {
  const missing = names.filter((n) => !process.env[n]);
  if (missing.length) throw new Error(`${missing.join(' / ')} not set: run through \`meld bench ${scenario}\` with the stack up`);
  return Object.fromEntries(names.map((n) => [n, process.env[n]!]));
}
