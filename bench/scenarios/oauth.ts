/**
 * oauth: the token endpoint through the gateway (authorization-code exchange with PKCE, and
 * refresh with rotation), and the gateway's check of an OAuth access token beside a product
 * token on the same route (`GET /v1/`) in the same run: the issue's goal is an OAuth token
 * costing the gateway no more than 1.2× a product token. The bench starts its own gateway and
 * oauth processes from the built apps (`node tools/build.mjs`) on a database of its own,
 * dropped at the end. Codes are written straight to Postgres (as the consent screen's Approve
 * writes them), so the exchange is timed without the sign-in.
 *
 * Options: --seconds N (5 per round), --rounds R (3), --connections C (8), --warmup S (1), --codes N (20000).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Pool } from 'undici';
import { hashToken } from '../../libs/auth/src';
import { pkcePair } from '../../libs/fixtures/src/oauth-flow';
import { freePort, startApp, stopApp, waitReady } from '../lib/apps';
import type { BenchContext, BenchRow, ScenarioResult } from '../lib/context';
import { closedLoop } from '../lib/load';
import { benchPostgres } from '../lib/postgres-db';
import { median, percentile } from '../lib/stats';
import { createBenchTenant } from '../lib/tenant';

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

const REDIRECT = 'http://127.0.0.1:9/callback';
const CLIENT = 'mcl_bench';

export async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const seconds = ctx.args.int('seconds', 5);
  const rounds = ctx.args.int('rounds', 3);
  const connections = ctx.args.int('connections', 8);
  const warmup = ctx.args.int('warmup', 1);
  const codeCount = ctx.args.int('codes', 20000);
  const serverUrl = process.env.MELD_POSTGRES_URL;
  if (!serverUrl || !process.env.MELD_REDIS_URL) throw new Error('MELD_POSTGRES_URL / MELD_REDIS_URL not set: run through `meld bench oauth` with the stack up');

  const suffix = randomBytes(4).toString('hex');
  const pg = await benchPostgres(serverUrl, `meld_bench_oauth_${suffix}`);
  const children: Record<string, ChildProcess> = {};
  try {
    const tenant = await createBenchTenant(pg.db, { name: `bench-oauth-${suffix}`, dataSources: 0, productScopes: ['PROJECT_AUDIENCE_READ'] });
    const [user] = await pg.db.query(`INSERT INTO users (organization_id, email, password_hash) VALUES ($1, $2, 'x') RETURNING id`, [tenant.organizationId, `bench-${suffix}@example.test`]);
    await pg.db.query(`INSERT INTO oauth_clients (id, name, redirect_uris, token_endpoint_auth_method) VALUES ($1, 'Bench app', $2, 'none')`, [CLIENT, [REDIRECT]]);
    const [grant] = await pg.db.query(`INSERT INTO oauth_grants (client_id, user_id, organization_id, scopes, projects) VALUES ($1, $2, $3, $4, $5) RETURNING id`, [
      CLIENT,
      user.id,
      tenant.organizationId,
      ['PROJECT_AUDIENCE_READ'],
      [tenant.project.uid],
    ]);
    // What the consent screen's Approve writes, once per exchange the bench may make.
    const { verifier, challenge } = pkcePair();
    const codes = Array.from({ length: codeCount }, () => randomBytes(32).toString('base64url'));
    await pg.db.query(
      `INSERT INTO oauth_codes (code_hash, grant_id, redirect_uri, code_challenge, expires_at) SELECT h, $2, $3, $4, now() + interval '1 hour' FROM unnest($1::text[]) h`,
      [codes.map((c) => hashToken(c)), grant.id, REDIRECT, challenge],
    );

    const [gatewayPort, oauthPort] = [await freePort(), await freePort()];
    const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    const oauthUrl = `http://127.0.0.1:${oauthPort}`;
    const common = { ...process.env, LOG_LEVEL: 'warn', MELD_POSTGRES_URL: pg.url, MELD_PUBLIC_URL: gatewayUrl };
    children.oauth = startApp(ctx.root, 'oauth', { ...common, PORT: String(oauthPort) });
    children.gateway = startApp(ctx.root, 'gateway', {
      ...common,
      MELD_PORT: String(gatewayPort),
      MELD_OPS_PORT: '0',
      MELD_OAUTH_URL: oauthUrl,
      MELD_RATE_LIMITS: JSON.stringify(Object.fromEntries(['large', 'standard', 'oauth', 'anonymous', 'client', 'authFailures'].map((c) => [c, { limit: 1_000_000_000 }]))),
      MELD_RATE_LIMIT_NAMESPACE: `bench-${suffix}`,
    });
    await Promise.all([waitReady(`${oauthUrl}/readyz`), waitReady(`${gatewayUrl}/readyz`)]);

    const pool = new Pool(gatewayUrl, { connections: connections * 2, keepAliveTimeout: 30_000 });
    const post = async (fields: Record<string, string>) => {
      const res = await pool.request({ method: 'POST', path: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
      const body = (await res.body.json()) as { access_token?: string; refresh_token?: string };
      return res.statusCode === 200 ? body : null;
    };
    let nextCode = 0;
    const exchange = () => {
      if (nextCode >= codes.length) throw new Error(`all ${codes.length} codes used: raise --codes`);
      return post({ grant_type: 'authorization_code', code: codes[nextCode++], code_verifier: verifier, client_id: CLIENT, redirect_uri: REDIRECT });
    };
    // Refresh chains, one per concurrent caller: each refresh rotates the token it took.
    const refreshTokens: string[] = [];
    for (let i = 0; i < connections; i++) refreshTokens.push((await exchange())!.refresh_token!);
    const first = await exchange();
    const oauthToken = first!.access_token!;
    const refusals = new Map<number, string>(); // first answer of each failing status, for the notes
    const get = (token: string) => async () => {
      const res = await pool.request({ method: 'GET', path: '/v1/', headers: { authorization: `Bearer ${token}` } });
      const text = await res.body.text();
      if (res.statusCode !== 200 && !refusals.has(res.statusCode)) refusals.set(res.statusCode, text.slice(0, 200));
      return res.statusCode === 200;
    };
    const variants = [
      { name: 'gateway GET /v1/, product token', call: get(tenant.productToken) },
      { name: 'gateway GET /v1/, OAuth access token', call: get(oauthToken) },
      { name: 'token endpoint: code exchange', call: async () => (await exchange()) !== null },
      {
        name: 'token endpoint: refresh (rotation)',
        call: async () => {
          const token = refreshTokens.shift()!;
          const answer = await post({ grant_type: 'refresh_token', refresh_token: token, client_id: CLIENT });
          refreshTokens.push(answer?.refresh_token ?? token);
          return answer !== null;
        },
      },
    ];
    for (const v of variants.slice(0, 2)) if (!(await v.call())) throw new Error(`${v.name}: the first call failed`);

    const shapes = [
      { label: 'c=1', concurrency: 1 },
      { label: `c=${connections}`, concurrency: connections },
    ];
    const results = new Map<string, Figures[]>();
    for (let round = 0; round < rounds; round++) {
      for (const shape of shapes) {
        // Product and OAuth token alternate first and second, so neither always runs on a warmer process.
        const order = round % 2 === 0 ? variants : [variants[1], variants[0], ...variants.slice(2)];
        for (const v of order) {
          const key = `${v.name} ${shape.label}`;
          const r = await closedLoop(shape.concurrency, seconds, warmup, v.call);
          const f: Figures = { rps: r.latencies.length / r.elapsedS, p50: percentile(r.latencies, 50), p99: percentile(r.latencies, 99), errors: r.errors };
          results.set(key, [...(results.get(key) ?? []), f]);
          ctx.log(`round ${round + 1} ${key}: ${f.rps.toFixed(0)} req/s, p50 ${f.p50.toFixed(2)} ms, p99 ${f.p99.toFixed(2)} ms${f.errors ? `, ${f.errors} failed` : ''}`);
        }
      }
    }
    await pool.close();

    const med = (key: string, field: keyof Figures) => median(results.get(key)!.map((f) => f[field]));
    const rows: BenchRow[] = shapes.flatMap((shape) =>
      variants.map((v, i) => ({
        name: `${v.name} ${shape.label}`,
        throughput: med(`${v.name} ${shape.label}`, 'rps'),
        p50Ms: med(`${v.name} ${shape.label}`, 'p50'),
        p99Ms: med(`${v.name} ${shape.label}`, 'p99'),
        peakRssMb: {},
        baseline: i === 1 ? `${variants[0].name} ${shape.label}` : undefined,
        runs: rounds,
      })),
    );
    const ratio = (shape: string, field: keyof Figures) => med(`${variants[1].name} ${shape}`, field) / med(`${variants[0].name} ${shape}`, field);
    const p50Ratio = ratio('c=1', 'p50');
    const rpsRatio = ratio(`c=${connections}`, 'rps');
    const errors = [...results.values()].flat().reduce((n, f) => n + f.errors, 0);
    return {
      title: `oauth: token endpoint and the gateway's OAuth token check vs a product token (${rounds} rounds × ${seconds} s)`,
      units: { throughput: 'requests/s', latency: 'one request, client side, through the gateway' },
      rows,
      notes: [
        `goal: an OAuth token costs the gateway ≤ 1.2× a product token: p50 at c=1 ${p50Ratio.toFixed(2)}× ${p50Ratio <= 1.2 ? 'MET' : 'MISSED'}; throughput at c=${connections} ${rpsRatio.toFixed(2)}× of the product token's (cost ${(1 / rpsRatio).toFixed(2)}×) ${1 / rpsRatio <= 1.2 ? 'MET' : 'MISSED'}`,
        `codes used: ${nextCode} of ${codes.length}; failed calls: ${errors}${[...refusals].map(([status, body]) => `; ${status}: ${body}`).join('')}`,
        'one machine: bench client, gateway, oauth, Postgres and Redis share its 2 cores',
      ],
      goals: [{ row: `${variants[1].name} c=${connections}`, minRatio: 1 / 1.2 }],
    };
  } finally {
    await Promise.all(Object.values(children).map((c) => stopApp(c)));
    await pg.drop();
  }
}
