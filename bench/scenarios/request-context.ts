/**
 * request-context: what the request-context / tracing plumbing costs per request with tracing
 * off (OTEL_EXPORTER_OTLP_ENDPOINT unset), the default (ADR 0208). Two processes of
 * bench/lib/request-context-server.ts answer the same route, `plain` (Fastify alone) and
 * `traced` (as every app boots), measured alternately in the same run: CPU µs per request of
 * each server (/proc) and req/s under a closed loop.
 *
 * Options: --seconds N (5 per round), --rounds R (3), --connections C (16).
 */
import type { ChildProcess } from 'node:child_process';
import { Pool } from 'undici';
import { freePort, startScript, stopApp, waitReady } from '../lib/apps';
import type { BenchContext, BenchRow, ScenarioResult } from '../lib/context';
import { processCpuUs } from '../lib/cpu';
import { closedLoop } from '../lib/load';
import { median, percentile } from '../lib/stats';

const MODES = ['plain', 'traced'] as const;

export async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const seconds = ctx.args.int('seconds', 5);
  const rounds = ctx.args.int('rounds', 3);
  const connections = ctx.args.int('connections', 16);
  const env = { ...process.env };
  delete env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const servers: Record<string, { child: ChildProcess; origin: string }> = {};
  for (const mode of MODES) {
    const port = await freePort();
    const child = startScript(ctx.root, 'bench/lib/request-context-server.ts', { ...env, PORT: String(port), MODE: mode });
    servers[mode] = { child, origin: `http://127.0.0.1:${port}` };
  }
  try {
    await Promise.all(MODES.map((m) => waitReady(`${servers[m]!.origin}/x`)));
    const figures = new Map<string, Array<{ rps: number; p50: number; p99: number; cpu: number }>>();
    for (let round = 0; round < rounds; round++) {
      for (const mode of round % 2 === 0 ? MODES : [...MODES].reverse()) {
        const { child, origin } = servers[mode]!;
        const pool = new Pool(origin, { connections });
        const before = processCpuUs(child.pid!);
        const r = await closedLoop(connections, seconds, 1, async () => {
          const res = await pool.request({ method: 'GET', path: '/x' });
          const body = (await res.body.json()) as { seen: boolean };
          return res.statusCode === 200 && body.seen;
        });
        const cpu = (processCpuUs(child.pid!) - before) / r.sent;
        await pool.close();
        figures.set(mode, [...(figures.get(mode) ?? []), { rps: r.latencies.length / r.elapsedS, p50: percentile(r.latencies, 50), p99: percentile(r.latencies, 99), cpu }]);
        ctx.log(`round ${round + 1} ${mode}: ${(r.latencies.length / r.elapsedS).toFixed(0)} req/s, ${cpu.toFixed(0)} µs CPU per request${r.errors ? `, ${r.errors} errors` : ''}`);
      }
    }
    const med = (mode: string, f: 'rps' | 'p50' | 'p99' | 'cpu') => median(figures.get(mode)!.map((x) => x[f]));
    const rows: BenchRow[] = MODES.map((mode) => ({ name: mode, throughput: med(mode, 'rps'), p50Ms: med(mode, 'p50'), p99Ms: med(mode, 'p99'), cpuUsPerOp: med(mode, 'cpu'), peakRssMb: {}, baseline: mode === 'plain' ? undefined : 'plain', runs: rounds }));
    return {
      title: `request-context: Fastify alone vs with the request-context plumbing, tracing off (${connections} connections, ${rounds} rounds × ${seconds} s)`,
      units: { throughput: 'req/s', latency: 'one request, client side', cpu: 'server process per request' },
      rows,
      notes: [`CPU the plumbing adds per request: ${(med('traced', 'cpu') - med('plain', 'cpu')).toFixed(0)} µs`],
    };
  } finally {
    await Promise.all(Object.values(servers).map((s) => stopApp(s.child)));
  }
}
