/**
 * readiness: `GET /v1/project/{p}/readiness` and `…/readiness/channel/sms` through the
 * gateway, for a project with 50 SMS senders × 100 countries and 1M audience contacts, beside
 * the bare Postgres reads the same report needs, timed alone in the same run (one snapshot:
 * BEGIN REPEATABLE READ READ ONLY; the project and organization row; EXISTS on the audience;
 * every sender with its countries; COMMIT), and the readiness app straight (principal signed
 * by the bench). The bench starts its own gateway and readiness processes from the built apps
 * (`npm run build`) on a database of its own, dropped at the end.
 *
 * Shapes: one request at a time (c=1: the latency a dashboard sees) and --connections
 * concurrent requests (closed loop). Rounds alternate the order of the variants.
 *
 * Options: --seconds N (5 per round), --rounds R (3), --connections C (8), --warmup S (1),
 * --contacts N (1,000,000), --senders N (50), --countries N (100).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { Pool as PgPool } from 'pg';
import { Pool } from 'undici';
import { encodePrincipal, generatePrincipalKeys, parsePrincipalKey, principalKeyEnv } from '../../libs/auth/src';
import { freePort, startApp, stopApp, waitReady } from '../lib/apps';
import type { BenchContext, BenchRow, ScenarioResult } from '../lib/context';
import { processCpuUs } from '../lib/cpu';
import { closedLoop } from '../lib/load';
import { benchPostgres } from '../lib/postgres-db';
import { RssSampler, type WatchedProcess } from '../lib/processes';
import { median, percentile } from '../lib/stats';
import { createBenchTenant } from '../lib/tenant';

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  sent: number;
}
interface Variant {
  name: string;
  call: () => Promise<boolean>;
}

/** Two-letter codes AA, AB, …: `n` distinct countries. */
const countryCodes = (n: number) => Array.from({ length: n }, (_, i) => String.fromCharCode(65 + Math.floor(i / 26), 65 + (i % 26)));

export async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const seconds = ctx.args.int('seconds', 5);
  const rounds = ctx.args.int('rounds', 3);
  const connections = ctx.args.int('connections', 8);
  const warmup = ctx.args.int('warmup', 1);
  const contacts = ctx.args.int('contacts', 1_000_000);
  const senders = ctx.args.int('senders', 50);
  const countries = ctx.args.int('countries', 100);
  const serverUrl = process.env.MELD_POSTGRES_URL;
  if (!serverUrl || !process.env.MELD_REDIS_URL) throw new Error('MELD_POSTGRES_URL / MELD_REDIS_URL not set: run through `meld bench readiness` with the stack up');

  const suffix = randomBytes(4).toString('hex');
  const pg = await benchPostgres(serverUrl, `meld_bench_readiness_${suffix}`);
  const children: Record<string, ChildProcess> = {};
  const bare = new PgPool({ connectionString: pg.url, max: connections });
  try {
    const tenant = await createBenchTenant(pg.db, { name: `bench-readiness-${suffix}`, dataSources: 0, productScopes: ['PROJECT_CAMPAIGN_READ'] });
    const projectId = tenant.project.id;
    const t0 = Date.now();
    await pg.db.query(`UPDATE organizations SET prepaid = true, funds = 100 WHERE id = $1`, [tenant.organizationId]);
    await pg.db.query(`UPDATE projects SET legal_profile_status = 'verified' WHERE id = $1`, [projectId]);
    await pg.db.query(
      `INSERT INTO senders (project_id, channel, alias, name, status, created_at)
       SELECT $1, 'sms', 'SENDER' || i, 'Sender ' || i, CASE WHEN i % 10 = 0 THEN 'inactive' ELSE 'active' END, now() + i * interval '1 ms'
         FROM generate_series(1, $2::int) i`,
      [projectId, senders],
    );
    await pg.db.query(
      `INSERT INTO sender_countries (sender_id, country, accepted, effective_status, price)
       SELECT s.id, c, (h % 7) <> 0, CASE WHEN h % 11 = 0 THEN 'pending' ELSE 'active' END, 0.01 + (h % 5) / 100.0
         FROM senders s, unnest($2::text[]) c, LATERAL (SELECT abs(hashtext(s.alias || c)) AS h) x
        WHERE s.project_id = $1`,
      [projectId, countryCodes(countries)],
    );
    ctx.log(`seeding ${contacts.toLocaleString('en')} audience contacts`);
    await pg.db.query(
      `INSERT INTO audience_contacts (project_id, id, attributes)
       SELECT $1, gen_random_uuid(), jsonb_build_object('_user_id', 'u' || i) FROM generate_series(1, $2::int) i`,
      [projectId, contacts],
    );
    await pg.db.query(`ANALYZE audience_contacts; ANALYZE senders; ANALYZE sender_countries`);
    ctx.log(`seeded ${senders} senders × ${countries} countries and ${contacts.toLocaleString('en')} contacts in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    const keys = generatePrincipalKeys(['readiness']);
    const signingKey = parsePrincipalKey(keys[principalKeyEnv('readiness')]!);
    const [gatewayPort, readinessPort] = [await freePort(), await freePort()];
    const readinessUrl = `http://127.0.0.1:${readinessPort}`;
    const common = { ...process.env, LOG_LEVEL: 'warn', ...keys, MELD_POSTGRES_URL: pg.url };
    children.readiness = startApp(ctx.root, 'readiness', { ...common, PORT: String(readinessPort) });
    children.gateway = startApp(ctx.root, 'gateway', {
      ...common,
      MELD_PORT: String(gatewayPort),
      MELD_OPS_PORT: '0',
      MELD_READINESS_URL: readinessUrl,
      MELD_RATE_LIMITS: JSON.stringify({ standard: { limit: 1_000_000_000 } }),
      MELD_RATE_LIMIT_NAMESPACE: `bench-${suffix}`,
    });
    await Promise.all([waitReady(`${readinessUrl}/readyz`), waitReady(`http://127.0.0.1:${gatewayPort}/readyz`)]);

    const gatewayPool = new Pool(`http://127.0.0.1:${gatewayPort}`, { connections, keepAliveTimeout: 30_000 });
    const directPool = new Pool(readinessUrl, { connections, keepAliveTimeout: 30_000 });
    const bearer = { authorization: `Bearer ${tenant.productToken}` };
    const path = `/v1/project/${tenant.project.uid}/readiness`;
    // Signed per request, as the gateway does: a principal is bound to one request (ADR 0102).
    const direct = () => {
      const requestId = randomUUID();
      const principal = encodePrincipal(
        { kind: 'product', tokenId: 'bench', organizationId: tenant.organizationId, plan: 'xl', scopes: [], project: { id: projectId, uid: tenant.project.uid, dataMode: 'normal' }, dataSourceId: null, requestId },
        { method: 'GET', url: path, app: 'readiness' },
        signingKey,
      );
      return { 'x-meld-principal': principal, 'x-request-id': requestId };
    };
    const http = (pool: Pool, p: string, headers: () => Record<string, string>) => async () => {
      const res = await pool.request({ method: 'GET', path: p, headers: headers() });
      await res.body.text();
      return res.statusCode === 200;
    };
    const bareReads = async () => {
      const client = await bare.connect();
      try {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        await client.query(`SELECT p.legal_profile_status, p.default_sms_sender, o.prepaid, o.funds FROM projects p JOIN organizations o ON o.id = p.organization_id WHERE p.id = $1`, [projectId]);
        await client.query(`SELECT EXISTS (SELECT 1 FROM audience_contacts WHERE project_id = $1) AS has`, [projectId]);
        const rows = await client.query(
          `SELECT s.id, s.channel, s.alias, s.name, s.status, c.country, c.accepted, c.effective_status, c.price
             FROM senders s LEFT JOIN sender_countries c ON c.sender_id = s.id WHERE s.project_id = $1 ORDER BY s.created_at, s.id, c.country`,
          [projectId],
        );
        await client.query('COMMIT');
        return rows.rowCount === senders * countries;
      } finally {
        client.release();
      }
    };
    const variants: Variant[] = [
      { name: 'bare Postgres reads (one snapshot)', call: bareReads },
      { name: 'readiness app straight (project)', call: http(directPool, path, direct) },
      { name: 'through gateway (project)', call: http(gatewayPool, path, () => bearer) },
      { name: 'through gateway (channel sms)', call: http(gatewayPool, `${path}/channel/sms`, () => bearer) },
    ];
    for (const v of variants) if (!(await v.call())) throw new Error(`${v.name}: the first call failed`);
    const sample = (await (await fetch(`http://127.0.0.1:${gatewayPort}${path}/channel/sms`, { headers: bearer })).json()) as { entity: { reach: { reachableCountries: string[] }; warnings: Array<{ key: string; count: number }> } };
    ctx.log(`channel sms report: ${sample.entity.reach.reachableCountries.length} countries, warnings ${sample.entity.warnings.map((w) => `${w.key} ${w.count}`).join(', ')}`);

    const processes: WatchedProcess[] = [{ name: 'bench', pid: process.pid }, ...Object.entries(children).map(([name, c]) => ({ name, pid: c.pid! }))];
    const shapes = [
      { label: 'c=1', concurrency: 1 },
      { label: `c=${connections}`, concurrency: connections },
    ];
    const results = new Map<string, Figures[]>();
    const cpu = new Map<string, Array<Record<string, number>>>();
    const rss = new Map<string, Array<Record<string, number>>>();
    for (let round = 0; round < rounds; round++) {
      for (const shape of shapes) {
        const order = round % 2 === 0 ? variants : [...variants].reverse();
        for (const v of order) {
          const key = `${v.name} ${shape.label}`;
          const sampler = new RssSampler(processes).start();
          const before = Object.fromEntries(Object.entries(children).map(([n, c]) => [n, processCpuUs(c.pid!)]));
          const r = await closedLoop(shape.concurrency, seconds, warmup, v.call);
          const f: Figures = { rps: r.latencies.length / r.elapsedS, p50: percentile(r.latencies, 50), p99: percentile(r.latencies, 99), errors: r.errors, sent: r.sent };
          cpu.set(key, [...(cpu.get(key) ?? []), Object.fromEntries(Object.entries(children).map(([n, c]) => [n, (processCpuUs(c.pid!) - before[n]) / r.sent]))]);
          rss.set(key, [...(rss.get(key) ?? []), sampler.stop()]);
          results.set(key, [...(results.get(key) ?? []), f]);
          ctx.log(`round ${round + 1} ${key}: ${f.rps.toFixed(0)} req/s, p50 ${f.p50.toFixed(2)} ms, p99 ${f.p99.toFixed(2)} ms${f.errors ? `, ${f.errors} failed` : ''}`);
        }
      }
    }
    await Promise.all([gatewayPool.close(), directPool.close()]);

    const med = (key: string, field: keyof Figures) => median(results.get(key)!.map((f) => f[field]));
    const rows: BenchRow[] = shapes.flatMap((shape) =>
      variants.map((v, i) => {
        const key = `${v.name} ${shape.label}`;
        return {
          name: key,
          throughput: med(key, 'rps'),
          p50Ms: med(key, 'p50'),
          p99Ms: med(key, 'p99'),
          cpuUsPerOp: i === 0 ? undefined : median(cpu.get(key)!.map((r) => Object.values(r).reduce((a, b) => a + b, 0))),
          peakRssMb: Object.fromEntries(processes.map((p) => [p.name, Math.max(...rss.get(key)!.map((r) => r[p.name] ?? Number.NaN))])),
          baseline: i === 0 ? undefined : `${variants[0].name} ${shape.label}`,
          runs: rounds,
        };
      }),
    );
    const p99 = (name: string) => med(`${name} c=1`, 'p99');
    const gw = p99(variants[2].name);
    const base = p99(variants[0].name);
    const errors = [...results.values()].flat().reduce((n, f) => n + f.errors, 0);
    const cpuNote = (key: string) => Object.keys(children).map((n) => `${n} ${median(cpu.get(key)!.map((r) => r[n])).toFixed(0)}`).join(', ');
    return {
      title: `readiness: ${senders} senders × ${countries} countries, ${contacts.toLocaleString('en')} contacts; gateway vs the bare Postgres reads (${rounds} rounds × ${seconds} s)`,
      units: { throughput: 'reports/s', latency: 'one report, client side', cpu: 'gateway + readiness processes per request (split in the notes)' },
      rows,
      notes: [
        `goal p99 ≤ 25 ms through the gateway, unloaded: ${gw.toFixed(2)} ms ${gw <= 25 ? 'MET' : 'MISSED'}`,
        `goal ≤ 1.5× the bare reads (p99, c=1): ${(gw / base).toFixed(2)}× ${gw / base <= 1.5 ? 'MET' : 'MISSED'} (bare ${base.toFixed(2)} ms)`,
        ...shapes.flatMap((shape) => variants.slice(1).map((v) => `CPU µs per request, ${v.name} ${shape.label}: ${cpuNote(`${v.name} ${shape.label}`)}`)),
        `failed calls: ${errors}`,
        'one machine: bench client, gateway, readiness, Postgres and Redis share its 2 cores',
      ],
      goals: [{ row: `${variants[2].name} c=${connections}`, minRatio: 0.67 }],
    };
  } finally {
    await Promise.all(Object.values(children).map((c) => stopApp(c)));
    await bare.end();
    await pg.drop();
  }
}
