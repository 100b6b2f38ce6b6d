/**
 * gateway: three public reads, each measured three ways in the same run (ADR 0206):
 *   bare      a bare Fastify process (bench/lib/bare-audience.ts: no Nest, no principal, no
 *             logs) doing the same store work: the floor, the physical limit on this box;
 *   direct    straight to the audience app with a principal signed by the bench;
 *   gateway   through the gateway (bearer → token and project caches → access decision →
 *             rate limit (local leases of a Redis counter, ADR 0207) → signed principal → undici to the audience app).
 * Routes: `GET /v1/project/{p}` (two Postgres reads), `GET …/audience/user/{u}` (a contact
 * lookup, one Postgres query) and `POST …/audience/count` (a count with an attribute filter on
 * a small audience: catalogue in Postgres, count in ClickHouse; the floor keeps the catalogue
 * in memory). The bench starts its own gateway, audience and bare processes (`npm run build`
 * first) on free ports against the stack in MELD_*, with rate limits raised so every request
 * is counted (a Redis call per lease of 64) but never refused, and creates (then deletes) a plan-xl organization
 * with one project, a product token, 20 contacts in Postgres and ClickHouse.
 *
 * Two load shapes, rounds rotating the order of the variants: saturation (closed loop,
 * --connections 32 concurrent requests: req/s, p50/p99 under load) and unloaded (one request at
 * a time: the latency the gateway adds). CPU µs per request is read per process (/proc).
 *
 * Options: --seconds N (5 per round), --rounds R (3), --connections C (32), --warmup S (1),
 * --routes a,b (project,contact,count), --log-level L (apps' LOG_LEVEL, default warn; `info`
 * adds one access-log line per request in both apps), --profile DIR (V8 CPU profiles of the
 * gateway and the audience app, written at their exit), --syscalls (counts each system call of the
 * gateway and the audience app per request with `strace -c`; slows them, so its other figures are
 * not comparable; ADR 0257), --before ROOT (A/B in one run: also measures the built gateway of another
 * checkout at ROOT, e.g. the commit before a change, as the `before` rows; ADR 0270).
 * The `proxy` rows put a bare Node proxy (bench/lib/bare-proxy.ts) in front of the bare floor: the
 * floor of any Node proxy hop on this box (ADR 0271).
 * --stub-app MS replaces the audience app with a stub (bench/lib/stub-app.ts) answering every route
 * with the same small JSON after MS ms: the `direct` and `gateway` rows then compare the gateway's
 * cost of a GET and a POST on equal terms, and the delay sets the request rate (ADR 0290).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import { encodePrincipal, generatePrincipalKeys, issueToken, parsePrincipalKey, principalKeyEnv } from '../../libs/auth/src';
import { createClickHouse, sql } from '../../libs/clickhouse/src';
import { defaultAttributionConfig, defaultGeneralConfig, RESERVED_ATTRIBUTES } from '../../libs/contracts/src';
import { AttributeEntity, DataSourceEntity, OrganizationEntity, ProjectEntity, TokenEntity, createDataSource } from '../../libs/db/src';
import { withSlotColumns } from '../../libs/fixtures/src/audience-rows';
import { freePort, startApp, startScript, stopApp, waitReady } from '../lib/apps';
import { closedLoop } from '../lib/load';
import type { BenchContext, BenchRow, ScenarioResult } from '../lib/context';
import { processCpuSplitUs } from '../lib/cpu';
import { RssSampler, type WatchedProcess } from '../lib/processes';
import { type SyscallCounts, SyscallTracer } from '../lib/syscalls';
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

interface Route {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

interface Target {
  name: 'bare' | 'proxy' | 'direct' | 'gateway' | 'before';
  origin: string;
  headers: (route: Route) => Record<string, string>;
}

const CONTACTS = 20;
const COUNT_FILTER = JSON.stringify({ root: { type: 'attribute_condition', key: '_first_name', operator: 'matches-string', values: ['Ada'] } });

/** Closed loop: `concurrency` workers each send the next request as soon as the last one is answered. */
async function load(target: Target, route: Route, concurrency: number, seconds: number, warmupSeconds: number): Promise<Figures> {
  const pool = new Pool(target.origin, { connections: concurrency, pipelining: 1, keepAliveTimeout: 30_000 });
  const { latencies, errors, sent, elapsedS } = await closedLoop(concurrency, seconds, warmupSeconds, async () => {
    const res = await pool.request({ method: route.method, path: route.path, headers: target.headers(route), body: route.body });
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
  const profileDir = ctx.args.string('profile');
  const traceSyscalls = ctx.args.flag('syscalls');
  const routeNames = (ctx.args.string('routes') ?? 'project,contact,count').split(',');
  const beforeRoot = ctx.args.string('before');
  const stubDelay = ctx.args.string('stub-app');
  const postgresUrl = process.env.MELD_POSTGRES_URL;
  const chUrl = process.env.MELD_CLICKHOUSE_URL;
  const chDb = process.env.MELD_CLICKHOUSE_DB;
  if (!postgresUrl || !process.env.MELD_REDIS_URL || !chUrl || !chDb) throw new Error('MELD_POSTGRES_URL / MELD_REDIS_URL / MELD_CLICKHOUSE_URL / MELD_CLICKHOUSE_DB not set: run through `meld bench gateway` with the stack up');

  // A tenant of its own, removed at the end (cascade deletes the project, token and contacts).
  const db = await createDataSource({ url: postgresUrl, applicationName: 'meld-bench', poolSize: 2 }).initialize();
  const ch = createClickHouse({ url: chUrl, database: chDb });
  const suffix = randomBytes(4).toString('hex');
  const org = await db.getRepository(OrganizationEntity).save({ name: `bench-gateway-${suffix}`, plan: 'xl' });
  const project = await db.getRepository(ProjectEntity).save({
    uid: `bench-gateway-${suffix}`,
    organizationId: org.id,
    name: 'Bench project',
    attributionConfig: defaultAttributionConfig(),
    generalConfig: defaultGeneralConfig() as unknown as Record<string, Record<string, unknown>>,
  });
  await db.getRepository(AttributeEntity).insert(RESERVED_ATTRIBUTES.map((a) => ({ ...a, projectId: project.id, reserved: true })));
  const dataSource = await db.getRepository(DataSourceEntity).save({ projectId: project.id, uid: 'bench', name: 'Bench' });
  const issued = issueToken('product');
  const token = await db.getRepository(TokenEntity).save({
    organizationId: org.id,
    kind: 'product',
    secretHash: issued.secretHash,
    prefix: issued.prefix,
    scopes: ['PROJECT_AUDIENCE_READ'],
    projects: [project.uid],
  });
  // A small audience: in Postgres (identity-merge's tables, read by the lookup) and in ClickHouse (the snapshot the count reads).
  const contacts: Array<{ id: string }> = await db.query(
    `WITH c AS (INSERT INTO audience_contacts (project_id, id, attributes, datasources, ds_contact_ids)
                SELECT $1, gen_random_uuid(), jsonb_build_object('_user_id', 'u' || i, '_first_name', CASE WHEN i % 2 = 0 THEN 'Ada' ELSE 'Grace' END), jsonb_build_array($3::text), jsonb_build_array($3::text || '/u' || i)
                  FROM generate_series(1, $2::int) i RETURNING id, attributes->>'_user_id' AS user_id)
     INSERT INTO audience_members (project_id, data_source_id, user_id, audience_id) SELECT $1, $3::uuid, user_id, id FROM c RETURNING audience_id AS id`,
    [project.id, CONTACTS, dataSource.id],
  );
  await ch.insert(
    'audience_snapshot',
    await withSlotColumns(
      db,
      contacts.map((c, i) => ({ project_id: project.id, audience_id: c.id, version: '1', deleted: 0, str_keys: ['_first_name'], str_values: [i % 2 === 0 ? 'Ada' : 'Grace'], num_keys: [], num_values: [], channels: [], updated_at: Math.floor(Date.now() / 1000), sign: 1 })),
    ),
  );

  const keys = generatePrincipalKeys(['audience']);
  const signingKey = parsePrincipalKey(keys[principalKeyEnv('audience')]!);
  const [gatewayPort, audiencePort, barePort, proxyPort, beforePort] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
  const audienceUrl = `http://127.0.0.1:${audiencePort}`;
  const bareUrl = `http://127.0.0.1:${barePort}`;
  const proxyUrl = `http://127.0.0.1:${proxyPort}`;
  const common = { ...process.env, LOG_LEVEL: logLevel, ...keys };
  const profile = (name: string) => (profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}.cpuprofile`] : []);
  const gatewayEnv = (port: number, namespace: string) => ({
    ...common,
    MELD_PORT: String(port),
    MELD_OPS_PORT: '0',
    MELD_AUDIENCE_URL: audienceUrl,
    // Counted on every request (the cost is measured), never refused.
    MELD_RATE_LIMITS: JSON.stringify({ large: { limit: 1_000_000_000 }, standard: { limit: 1_000_000_000 } }),
    MELD_RATE_LIMIT_NAMESPACE: namespace,
  });
  const children: Record<string, ChildProcess> = {
    bare: startScript(ctx.root, 'bench/lib/bare-audience.ts', { ...process.env, PORT: String(barePort), BARE_ORGANIZATION_ID: org.id, BARE_PROJECT_ID: project.id }),
    proxy: startScript(ctx.root, 'bench/lib/bare-proxy.ts', { ...process.env, PORT: String(proxyPort), BARE_PROXY_UPSTREAM: bareUrl }),
    audience:
      stubDelay === undefined
        ? startApp(ctx.root, 'audience', { ...common, PORT: String(audiencePort) }, profile('audience'))
        : startScript(ctx.root, 'bench/lib/stub-app.ts', { ...process.env, PORT: String(audiencePort), STUB_DELAY_MS: stubDelay }),
    gateway: startApp(ctx.root, 'gateway', gatewayEnv(gatewayPort, `bench-${suffix}`), profile('gateway')),
    // A/B in one run: another build of the gateway (e.g. the commit before a change) in front of the same app.
    ...(beforeRoot ? { before: startApp(beforeRoot, 'gateway', gatewayEnv(beforePort, `bench-${suffix}-before`)) } : {}),
  };
  try {
    await Promise.all([waitReady(`${audienceUrl}/readyz`), waitReady(`http://127.0.0.1:${gatewayPort}/readyz`), waitReady(`${bareUrl}/v1/project/${project.uid}`), waitReady(`${proxyUrl}/v1/project/${project.uid}`), ...(beforeRoot ? [waitReady(`http://127.0.0.1:${beforePort}/readyz`)] : [])]);
    const processes: WatchedProcess[] = [{ name: 'bench', pid: process.pid }, ...Object.entries(children).map(([name, c]) => ({ name, pid: c.pid! }))];
    const base = `/v1/project/${project.uid}`;
    const allRoutes: Route[] = [
      { name: 'project', method: 'GET', path: base },
      { name: 'contact', method: 'GET', path: `${base}/audience/user/u1` },
      { name: 'count', method: 'POST', path: `${base}/audience/count`, body: COUNT_FILTER },
    ];
    const routes = allRoutes.filter((r) => routeNames.includes(r.name));
    const json = (route: Route): Record<string, string> => (route.body ? { 'content-type': 'application/json' } : {});
    const bare: Target = { name: 'bare', origin: bareUrl, headers: json };
    // The floor of any Node proxy hop (ADR 0271): the bare proxy in front of the bare floor.
    const proxy: Target = { name: 'proxy', origin: proxyUrl, headers: json };
    const direct: Target = {
      name: 'direct',
      origin: audienceUrl,
      // Signed per request, as the gateway does: a principal is bound to one request id (ADR 0102).
      headers: (route) => {
        const requestId = randomUUID();
        const principal = encodePrincipal(
          { kind: 'product', tokenId: token.id, organizationId: org.id, plan: 'xl', scopes: ['PROJECT_AUDIENCE_READ'], project: { id: project.id, uid: project.uid, dataMode: 'normal' }, dataSourceId: null, requestId },
          { method: route.method, url: route.path, app: 'audience' },
          signingKey,
        );
        return { ...json(route), 'x-meld-principal': principal, 'x-request-id': requestId };
      },
    };
    const gateway: Target = { name: 'gateway', origin: `http://127.0.0.1:${gatewayPort}`, headers: (route) => ({ ...json(route), authorization: `Bearer ${issued.token}` }) };
    const before: Target = { ...gateway, name: 'before', origin: `http://127.0.0.1:${beforePort}` };
    const targets = beforeRoot ? [bare, proxy, direct, gateway, before] : [bare, proxy, direct, gateway];

    for (const route of routes) {
      for (const t of targets) {
        const res = await fetch(`${t.origin}${route.path}`, { method: route.method, headers: t.headers(route), body: route.body });
        const text = await res.text();
        if (res.status !== 200) throw new Error(`${t.name}: ${route.method} ${route.path} answered ${res.status} ${text}`);
        if (route.name === 'count' && !text.includes(`"totalHits":${CONTACTS / 2}`)) throw new Error(`${t.name}: count answered ${text}`);
      }
    }
    ctx.log(`gateway :${gatewayPort} → audience :${audiencePort}, bare :${barePort}; ${rounds} rounds × ${seconds} s; ${connections} connections; LOG_LEVEL ${logLevel}`);

    const shapes = [
      { label: `c=${connections}`, concurrency: connections },
      { label: 'c=1', concurrency: 1 },
    ];
    const keyOf = (route: Route, target: Target, label: string) => `${route.name} ${target.name} ${label}`;
    const results = new Map<string, Figures[]>();
    /** CPU µs per request of each process, per measurement (robust to other load on the machine, unlike req/s). */
    const cpu = new Map<string, Array<Record<string, number>>>();
    const rss = new Map<string, Array<Record<string, number>>>();
    const syscalls = new Map<string, Array<Record<string, SyscallCounts>>>();
    const traced = processes.filter((p) => p.name === 'gateway' || p.name === 'audience');
    for (let round = 0; round < rounds; round++) {
      for (const route of routes) {
        for (const shape of shapes) {
          const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
          for (const target of order) {
            const key = keyOf(route, target, shape.label);
            const sampler = new RssSampler(processes).start();
            const before = Object.fromEntries(Object.entries(children).map(([n, c]) => [n, processCpuSplitUs(c.pid!)]));
            const tracer = traceSyscalls && target !== bare ? await new SyscallTracer().start(traced) : undefined;
            const f = await load(target, route, shape.concurrency, seconds, warmup);
            if (tracer) syscalls.set(key, [...(syscalls.get(key) ?? []), perRequest(await tracer.stop(), f.sent)]);
            cpu.set(key, [...(cpu.get(key) ?? []), cpuPerRequest(children, before, f.sent)]);
            rss.set(key, [...(rss.get(key) ?? []), sampler.stop()]);
            results.set(key, [...(results.get(key) ?? []), f]);
            ctx.log(`round ${round + 1} ${key}: ${f.rps.toFixed(0)} req/s, p50 ${f.p50.toFixed(2)} ms, p99 ${f.p99.toFixed(2)} ms${f.errors ? `, ${f.errors} non-200` : ''}`);
          }
        }
      }
    }

    const med = (key: string, field: keyof Figures) => median(results.get(key)!.map((f) => f[field]));
    const peak = (key: string) => Object.fromEntries(processes.map((p) => [p.name, Math.max(...rss.get(key)!.map((r) => r[p.name] ?? Number.NaN))]));
    // Only the processes a variant's requests go through (the others idle in the same window).
    const involved: Record<Target['name'], string[]> = { bare: ['bare'], proxy: ['proxy', 'bare'], direct: ['audience'], gateway: ['gateway', 'audience'], before: ['before', 'audience'] };
    const baselineOf: Record<Target['name'], Target | undefined> = { bare: undefined, proxy: bare, direct: bare, gateway: direct, before: direct };
    const rows: BenchRow[] = [];
    for (const route of routes) {
      for (const shape of shapes) {
        for (const target of targets) {
          const key = keyOf(route, target, shape.label);
          const baseline = baselineOf[target.name];
          rows.push({
            name: key,
            throughput: med(key, 'rps'),
            p50Ms: med(key, 'p50'),
            p99Ms: med(key, 'p99'),
            cpuUsPerOp: median(cpu.get(key)!.map((r) => involved[target.name].reduce((sum, n) => sum + r[n]!, 0))),
            peakRssMb: peak(key),
            baseline: baseline ? keyOf(route, baseline, shape.label) : undefined,
            runs: rounds,
          });
        }
      }
    }
    const added = (route: Route, label: string, field: 'p50' | 'p99') => med(keyOf(route, gateway, label), field) - med(keyOf(route, direct, label), field);
    const errors = [...results.values()].flat().reduce((n, f) => n + f.errors, 0);
    const cpuOf = (key: string, n: string) => median(cpu.get(key)!.map((r) => r[n]!)).toFixed(0);
    // The kernel's part (system time: socket reads and writes, epoll) beside the total, per process.
    const cpuNote = (key: string, target: Target) => involved[target.name].map((n) => `${n} ${cpuOf(key, n)} (kernel ${cpuOf(key, `${n} sys`)})`).join(', ');
    const big = `c=${connections}`;
    return {
      title: `gateway: ${routes.map((r) => r.name).join(', ')}: bare Fastify floor vs straight to audience vs through the gateway (${connections} connections and 1, ${rounds} rounds × ${seconds} s)`,
      units: { throughput: 'req/s', latency: 'one request, client side', cpu: 'CPU µs per request of the processes it crosses, summed (split in the notes); the baseline of direct is bare, of gateway is direct' },
      rows,
      notes: [
        ...routes.map(
          (r) =>
            `${r.name}: direct/bare ${(med(keyOf(r, direct, big), 'rps') / med(keyOf(r, bare, big), 'rps')).toFixed(2)} (goal ≥ 0.5), gateway/direct ${(med(keyOf(r, gateway, big), 'rps') / med(keyOf(r, direct, big), 'rps')).toFixed(2)} (goal ≥ 0.8); gateway adds p50 +${added(r, 'c=1', 'p50').toFixed(2)} ms at c=1 (goal ≤ 1 ms), p99 +${added(r, 'c=1', 'p99').toFixed(2)} ms; the bare proxy hop: proxy/bare ${(med(keyOf(r, proxy, big), 'rps') / med(keyOf(r, bare, big), 'rps')).toFixed(2)}`,
        ),
        ...(beforeRoot
          ? routes.flatMap((r) => shapes.map((shape) => `${r.name} ${shape.label}: gateway/before ${(med(keyOf(r, gateway, shape.label), 'rps') / med(keyOf(r, before, shape.label), 'rps')).toFixed(2)} req/s, gateway CPU ${cpuOf(keyOf(r, gateway, shape.label), 'gateway')} vs before ${cpuOf(keyOf(r, before, shape.label), 'before')} µs per request`))
          : []),
        ...routes.flatMap((r) => shapes.flatMap((shape) => targets.map((t) => `CPU µs per request, ${keyOf(r, t, shape.label)}: ${cpuNote(keyOf(r, t, shape.label), t)}`))),
        ...[...syscalls.entries()].map(([key, runs]) => `syscalls per request, ${key}: ${describeSyscalls(runs, involved[key.split(' ')[1] as Target['name']])}`),
        `per round req/s: ${[...results.entries()].map(([k, v]) => `${k} ${v.map((f) => Math.round(f.rps)).join('/')}`).join('; ')}`,
        `non-200 answers: ${errors}`,
        'one machine: bench client, gateway, audience, the floor, Postgres, ClickHouse and Redis share its cores; the gateway path costs a second process hop, a signature and a Redis round trip per rate-limit lease',
      ],
      goals: routes.flatMap((r) => [
        { row: keyOf(r, direct, big), minRatio: 0.5 },
        { row: keyOf(r, gateway, big), minRatio: 0.8 },
      ]),
    };
  } finally {
    await Promise.all(Object.values(children).map((c) => stopApp(c)));
    await db.query(`DELETE FROM audience_members WHERE project_id = $1`, [project.id]);
    await db.query(`DELETE FROM audience_contacts WHERE project_id = $1`, [project.id]);
    await db.getRepository(OrganizationEntity).delete({ id: org.id });
    await ch.command(sql`ALTER TABLE audience_snapshot DELETE WHERE project_id = ${project.id}`).catch(() => undefined);
    await Promise.all([db.destroy(), ch.close()]);
  }
}

/** CPU µs per request of each child since `before`, and its system (kernel) part under `<name> sys`. */
function cpuPerRequest(children: Record<string, ChildProcess>, before: Record<string, { user: number; sys: number }>, requests: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, child] of Object.entries(children)) {
    const now = processCpuSplitUs(child.pid!);
    out[name] = (now.user + now.sys - before[name]!.user - before[name]!.sys) / requests;
    out[`${name} sys`] = (now.sys - before[name]!.sys) / requests;
  }
  return out;
}

function perRequest(counts: Record<string, SyscallCounts>, requests: number): Record<string, SyscallCounts> {
  return Object.fromEntries(Object.entries(counts).map(([name, c]) => [name, new Map([...c].map(([call, n]) => [call, n / requests]))]));
}

/** Median calls per request of each syscall seen at least once per 20 requests, per process. */
function describeSyscalls(runs: Array<Record<string, SyscallCounts>>, processNames: string[]): string {
  return processNames
    .filter((name) => runs[0]?.[name])
    .map((name) => {
      const calls = new Set(runs.flatMap((r) => [...(r[name]?.keys() ?? [])]));
      const figures = [...calls]
        .map((call) => [call, median(runs.map((r) => r[name]?.get(call) ?? 0))] as const)
        .filter(([, n]) => n >= 0.05)
        .sort((a, b) => b[1] - a[1]);
      const total = figures.reduce((sum, [, n]) => sum + n, 0);
      return `${name} ${total.toFixed(1)} (${figures.map(([call, n]) => `${call} ${n.toFixed(2)}`).join(', ')})`;
    })
    .join('; ');
}
