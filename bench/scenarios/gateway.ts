/**
 * gateway: `GET /v1/project/{p}` through the gateway (bearer → token and project caches →
 * access decision → Redis rate limit → signed principal → undici to the audience app) vs
 * the same request straight to the audience app with a principal signed by the bench, in
 * the same run. The bench starts its own gateway and audience processes from the built
 * apps (`npm run build`) on free ports against the dev stack, with rate limits raised so
 * the Redis script runs on every request but never refuses, and creates (then deletes) a
 * plan-xl organization with one project and one token.
 *
 * Two load shapes, rounds alternating which variant goes first: saturation (closed loop,
 * --connections 32 concurrent requests: req/s, p50/p99 under load) and unloaded
 * (one request at a time: the latency the gateway adds).
 *
 * Options: --seconds N (5 per round), --rounds R (3), --connections C (32), --warmup S (1),
 * --log-level L (apps' LOG_LEVEL, default warn; `info` adds one access-log line per request
 * in both apps), --profile-gateway DIR (V8 CPU profile of the gateway, written at its exit).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import { encodePrincipal, generatePrincipalKeys, issueToken, parsePrivateKey } from '../../libs/auth/src';
import { defaultAttributionConfig, defaultGeneralConfig } from '../../libs/contracts/src';
import { OrganizationEntity, ProjectEntity, TokenEntity, createDataSource } from '../../libs/db/src';
import { freePort, startApp, waitReady } from '../lib/apps';
import { closedLoop } from '../lib/load';
import type { BenchContext, BenchRow, ScenarioResult } from '../lib/context';
import { processCpuUs } from '../lib/cpu';
import { RssSampler, type WatchedProcess } from '../lib/processes';
import { median, percentile } from '../lib/stats';

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** Every request answered, warm-up included (the CPU figures cover the whole load). */
  sent: number;
  [key: string]: number;
}

interface Target {
  name: string;
  origin: string;
  headers: () => Record<string, string>;
}




/** Closed loop: `concurrency` workers each send the next request as soon as the last one is answered. */
async function load(target: Target, path: string, concurrency: number, seconds: number, warmupSeconds: number): Promise<Figures> {
  const pool = new Pool(target.origin, { connections: concurrency, pipelining: 1, keepAliveTimeout: 30_000 });
  const { latencies, errors, sent, elapsedS } = await closedLoop(concurrency, seconds, warmupSeconds, async () => {
    const res = await pool.request({ method: 'GET', path, headers: target.headers() });
    await res.body.dump();
    return res.statusCode === 200;
  });
  await pool.close();
  return { rps: latencies.length / elapsedS, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors, sent };
}

export async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const seconds = ctx.args.int('seconds', 5);
  const rounds = ctx.args.int('rounds', 3);
  const connections = ctx.args.int('connections', 32);
  const warmup = ctx.args.int('warmup', 1);
  const logLevel = ctx.args.string('log-level') ?? 'warn';
  const profileDir = ctx.args.string('profile-gateway');
  const postgresUrl = process.env.MELD_POSTGRES_URL;
  if (!postgresUrl || !process.env.MELD_REDIS_URL) throw new Error('MELD_POSTGRES_URL / MELD_REDIS_URL not set: run through `meld bench gateway` with the stack up');

  // A tenant of its own, removed at the end (cascade deletes the project and token).
  const db = await createDataSource({ url: postgresUrl, applicationName: 'meld-bench', poolSize: 2 }).initialize();
  const suffix = randomBytes(4).toString('hex');
  const org = await db.getRepository(OrganizationEntity).save({ name: `bench-gateway-${suffix}`, plan: 'xl' });
  const project = await db.getRepository(ProjectEntity).save({
    uid: `bench-gateway-${suffix}`,
    organizationId: org.id,
    name: 'Bench project',
    attributionConfig: defaultAttributionConfig(),
    generalConfig: defaultGeneralConfig() as unknown as Record<string, Record<string, unknown>>,
  });
  const issued = issueToken('product');
  const token = await db.getRepository(TokenEntity).save({
    organizationId: org.id,
    kind: 'product',
    secretHash: issued.secretHash,
    prefix: issued.prefix,
    scopes: ['PROJECT_AUDIENCE_READ'],
    projects: [project.uid],
  });

  const keys = generatePrincipalKeys();
  const signingKey = parsePrivateKey(keys.privateKey);
  const [gatewayPort, audiencePort] = [await freePort(), await freePort()];
  const audienceUrl = `http://127.0.0.1:${audiencePort}`;
  const common = { ...process.env, LOG_LEVEL: logLevel, MELD_PRINCIPAL_PUBLIC_KEY: keys.publicKey, MELD_PRINCIPAL_PRIVATE_KEY: keys.privateKey };
  const children: Record<string, ChildProcess> = {
    audience: startApp(ctx.root, 'audience', { ...common, PORT: String(audiencePort) }),
    gateway: startApp(ctx.root, 'gateway', {
      ...common,
      MELD_PORT: String(gatewayPort),
      MELD_OPS_PORT: '0',
      MELD_AUDIENCE_URL: audienceUrl,
      // Counted on every request (the cost is measured), never refused.
      MELD_RATE_LIMITS: JSON.stringify({ large: { limit: 1_000_000_000 } }),
      MELD_RATE_LIMIT_NAMESPACE: `bench-${suffix}`,
    }, profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
  };
  try {
    await Promise.all([waitReady(`${audienceUrl}/readyz`), waitReady(`http://127.0.0.1:${gatewayPort}/readyz`)]);
    const processes: WatchedProcess[] = [{ name: 'bench', pid: process.pid }, ...Object.entries(children).map(([name, c]) => ({ name, pid: c.pid! }))];
    const path = `/v1/project/${project.uid}`;
    const direct: Target = {
      name: 'direct to audience',
      origin: audienceUrl,
      // Signed per request, as the gateway does: a principal is bound to one request id (ADR 0102).
      headers: () => {
        const requestId = randomUUID();
        const principal = encodePrincipal(
          { kind: 'product', tokenId: token.id, organizationId: org.id, plan: 'xl', scopes: ['PROJECT_AUDIENCE_READ'], project: { id: project.id, uid: project.uid, dataMode: 'normal' }, dataSourceId: null, requestId },
          { method: 'GET', url: path, app: 'audience' },
          signingKey,
        );
        return { 'x-meld-principal': principal, 'x-request-id': requestId };
      },
    };
    const gateway: Target = { name: 'through gateway', origin: `http://127.0.0.1:${gatewayPort}`, headers: () => ({ authorization: `Bearer ${issued.token}` }) };

    for (const t of [direct, gateway]) {
      const res = await fetch(`${t.origin}${path}`, { headers: t.headers() });
      if (res.status !== 200) throw new Error(`${t.name}: GET ${path} answered ${res.status} ${await res.text()}`);
    }
    ctx.log(`gateway :${gatewayPort} → audience :${audiencePort}; ${rounds} rounds × ${seconds} s; ${connections} connections; LOG_LEVEL ${logLevel}`);

    const shapes = [
      { label: `c=${connections}`, concurrency: connections },
      { label: 'c=1', concurrency: 1 },
    ];
    const results = new Map<string, Figures[]>();
    /** CPU µs per request of each app process, per measurement (robust to other load on the machine, unlike req/s). */
    const cpu = new Map<string, Array<Record<string, number>>>();
    const rss = new Map<string, Array<Record<string, number>>>();
    for (let round = 0; round < rounds; round++) {
      for (const shape of shapes) {
        const order = round % 2 === 0 ? [direct, gateway] : [gateway, direct];
        for (const target of order) {
          const key = `${target.name} ${shape.label}`;
          const sampler = new RssSampler(processes).start();
          const before = Object.fromEntries(Object.entries(children).map(([n, c]) => [n, processCpuUs(c.pid!)]));
          const f = await load(target, path, shape.concurrency, seconds, warmup);
          cpu.set(key, [...(cpu.get(key) ?? []), Object.fromEntries(Object.entries(children).map(([n, c]) => [n, (processCpuUs(c.pid!) - before[n]) / f.sent]))]);
          rss.set(key, [...(rss.get(key) ?? []), sampler.stop()]);
          results.set(key, [...(results.get(key) ?? []), f]);
          ctx.log(`round ${round + 1} ${key}: ${f.rps.toFixed(0)} req/s, p50 ${f.p50.toFixed(2)} ms, p99 ${f.p99.toFixed(2)} ms${f.errors ? `, ${f.errors} non-200` : ''}`);
        }
      }
    }

    const med = (key: string, field: keyof Figures) => median(results.get(key)!.map((f) => f[field]));
    const peak = (key: string) => Object.fromEntries(processes.map((p) => [p.name, Math.max(...rss.get(key)!.map((r) => r[p.name] ?? Number.NaN))]));
    const rows: BenchRow[] = [];
    for (const shape of shapes) {
      for (const target of [direct, gateway]) {
        const key = `${target.name} ${shape.label}`;
        rows.push({
          name: key,
          throughput: med(key, 'rps'),
          p50Ms: med(key, 'p50'),
          p99Ms: med(key, 'p99'),
          cpuUsPerOp: median(cpu.get(key)!.map((r) => Object.values(r).reduce((a, b) => a + b, 0))),
          peakRssMb: peak(key),
          baseline: target === gateway ? `${direct.name} ${shape.label}` : undefined,
          runs: rounds,
        });
      }
    }
    const added = (label: string, field: 'p50' | 'p99') => med(`${gateway.name} ${label}`, field) - med(`${direct.name} ${label}`, field);
    const errors = [...results.values()].flat().reduce((n, f) => n + f.errors, 0);
    const cpuNote = (key: string) => Object.keys(children).map((n) => `${n} ${median(cpu.get(key)!.map((r) => r[n])).toFixed(0)}`).join(', ');
    return {
      title: `gateway: GET /v1/project/{p} through the gateway vs straight to audience (${connections} connections and 1, ${rounds} rounds × ${seconds} s)`,
      units: { throughput: 'req/s', latency: 'one request, client side', cpu: 'gateway + audience processes per request (split in the notes)' },
      rows,
      notes: [
        `latency the gateway adds, unloaded (c=1): p50 +${added('c=1', 'p50').toFixed(2)} ms (goal ≤ 1 ms), p99 +${added('c=1', 'p99').toFixed(2)} ms`,
        `under load (c=${connections}): p50 +${added(`c=${connections}`, 'p50').toFixed(2)} ms, p99 +${added(`c=${connections}`, 'p99').toFixed(2)} ms (closed loop: latency grows as throughput falls)`,
        ...shapes.flatMap((shape) => [direct, gateway].map((t) => `CPU µs per request, ${t.name} ${shape.label}: ${cpuNote(`${t.name} ${shape.label}`)}`)),
        `per round req/s: ${[...results.entries()].map(([k, v]) => `${k} ${v.map((f) => Math.round(f.rps)).join('/')}`).join('; ')}`,
        `non-200 answers: ${errors}`,
        'one machine: bench client, gateway, audience, Postgres and Redis share its cores; the gateway path costs a second process hop and a Redis round trip per request',
      ],
      goals: [{ row: `${gateway.name} c=${connections}`, minRatio: 0.7 }],
    };
  } finally {
    await Promise.all(
      Object.values(children).map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            const kill = setTimeout(() => c.kill('SIGKILL'), 10_000);
            c.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            c.kill('SIGTERM');
          }),
      ),
    );
    await db.getRepository(OrganizationEntity).delete({ id: org.id });
    await db.destroy();
  }
}
