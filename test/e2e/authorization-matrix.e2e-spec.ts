import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { PLAN_GATED_SCOPES, hashToken } from '@meld/auth';
import { ALL_SCOPES, PRODUCT_SCOPES, PUBLIC_ROUTES, type PublicRoute, type Scope, routeParams } from '@meld/contracts';
import { testEnv } from '@meld/testing';
import type { DataSource } from 'typeorm';
import { oauthTokens } from '@meld/fixtures';
import { openTestDb } from '../../apps/gateway/test/support/tenancy';
import { adminApi } from './support/admin-api';

// Every public route × every kind of caller → the status the gateway must answer, generated
// from the route table (libs/contracts/src/routes.ts): a route added there is tested here
// without anyone remembering to. The eight apps run as processes (as `npm start` runs them);
// tenants and tokens are made through the operator API, and the revoked token is revoked
// with DELETE /admin/v1/tokens/{id} after the gateway has cached it. OAuth tokens come from
// the real flow through the gateway (registration, consent screen, code exchange), one per
// distinct scope set, for a dashboard user of the organization; the expired one and the one
// bound to another resource (RFC 8707) are made so in Postgres before the gateway first sees
// them. The plan-gated scopes are gated at plan m (MELD_PLAN_GATED_SCOPES, ADR 0328): the home
// organization is on m, a second one on s holds tokens granted them that its plan does not unlock.
const { startApps } = require(join(__dirname, '../../tools/cli/apps.js'));

const GATEWAY_PORT = 28080;
const BASE = `http://127.0.0.1:${GATEWAY_PORT}`;

/** Example values of path parameters; a route with a new parameter fails here until one is added. */
const EXAMPLE_PARAMS: Record<string, (f: Fixture) => string> = {
  project: (f) => f.project,
  datasource: (f) => f.dataSource,
  eventType: (f) => f.eventType,
  // Each DELETE deletes its contact: every call takes a fresh one created in beforeAll.
  userId: (f) => f.userIds.shift() ?? 'matrix-no-contact-left',
  phone: () => '+33612345678',
  userEmail: () => 'nobody@example.com',
  audienceId: () => randomUUID(),
  channel: () => 'sms',
  segmentId: () => randomUUID(),
  sender: () => 'default',
  target: () => '+33612345678',
  smsId: () => randomUUID(),
};
/**
 * What the owning app answers, by route id, to a caller the gateway let through with exactly
 * the route's scopes, when that is not a success: the searches need dataPolicy.mayReadPii
 * (Basic or Full), which the route's PROJECT_AUDIENCE_READ alone does not give (403 from the
 * audience app); the user read of the routes' example user id finds no contact (404).
 */
const APP_ANSWERS: Record<string, number> = {
  'audience.search.phone': 403,
  'audience.search.email': 403,
  'audience.user': 404,
  // A random audience id: no such contact.
  'audience.events': 404,
  // A random segment id: no such segment.
  'segment.read': 404,
  'segment.update': 404,
  'segment.delete': 404,
  'segment.count': 404,
  // The matrix's project has no default SMS sender.
  'sms.direct.send': 404,
  // A random SMS id: no such message.
  'sms.read': 404,
};
/**
 * What the owning app answers a caller with the route's scopes whose project is in
 * anonymized or blocked data mode, where that differs from APP_ANSWERS (ADR 0121): a blocked
 * project's contact-derived reads are refused; anonymized ones answer as in normal mode,
 * masked (the masking itself is tested beside each read).
 */
const DATA_MODE_ANSWERS: Record<'anonymized' | 'blocked', Record<string, number>> = {
  anonymized: {},
  blocked: { 'audience.events': 403, 'event.scroll': 403, 'event.search': 403, 'audience.aggregations': 403, 'event.aggregations': 403, 'sms.list': 403, 'sms.read': 403 },
};
/** Valid bodies for routes that take one (writes), by route id. */
const EXAMPLE_BODIES: Record<string, unknown> = {
  'stream.contacts.write': [{ _user_id: 'matrix-contact', _first_name: 'Matrix' }],
  'stream.events.write': [{ _user_id: 'matrix-contact', _event_id: 'matrix-event', _event_type: 'order_completed' }],
  'segment.create': { name: 'Matrix segment', filter: { version: '0.0.1', root: { type: 'group', children: [] } } },
  'segment.update': { name: 'Renamed' },
  'audience.count': {},
  'audience.scroll': {},
  'audience.search': {},
  'audience.aggregations': { aggregations: [{ type: 'terms', attribute: '_first_name' }] },
  'event.scroll': {},
  'event.search': {},
  'event.aggregations': { aggregations: [{ type: 'terms', field: 'eventType' }] },
  'probes.coverage': {},
  'sms.direct.send': { text: 'Matrix' },
  'probes.volumes': {},
};

interface Fixture {
  project: string;
  /** The project of the organization on plan s, below the plan-gated scopes' gate. */
  smallProject: string;
  /** Projects of the home organization in anonymized and blocked data mode. */
  modeProjects: Record<'anonymized' | 'blocked', string>;
  dataSource: string;
  eventType: string;
  userIds: string[];
  tokens: Record<string, { token: string }>;
}

const admin = adminApi(BASE);

/** A product token through the operator API (which wants at least one scope: a scope no route here needs stands in for "none"). */
async function productToken(org: string, scopes: readonly Scope[], projects: string[]) {
  const created = await admin('POST', `/organizations/${org}/tokens`, { scopes: scopes.length ? scopes : ['PROJECT_CAMPAIGN_READ'], projects });
  return { id: created.entity.id, token: created.metadata!.token! };
}

type Caller =
  | 'none'
  | 'malformed'
  | 'unknown'
  | 'revoked'
  | 'other organization'
  | 'project not listed'
  | 'data source (own)'
  | 'data source (other)'
  | 'oauth with the scopes'
  | 'oauth without the scopes'
  | 'oauth, project not granted'
  | 'oauth expired'
  | 'oauth for another resource'
  | 'product without the scopes'
  | 'product missing one of the scopes'
  | 'product with the scopes'
  | 'product with the scopes, plan below the gate'
  | 'product with the scopes, anonymized project'
  | 'product with the scopes, blocked project';

/** The gate the matrix's gateway runs with: every plan-gated scope from plan m (ADR 0328). */
const GATE_PLAN = 'm';
const GATED: ReadonlySet<Scope> = new Set(PLAN_GATED_SCOPES);
/** The scopes a caller's token is short of on a route, when the matrix expects a scope refusal. */
function missingScopes(route: PublicRoute, caller: Caller): Scope[] | undefined {
  switch (caller) {
    case 'oauth without the scopes':
    case 'product without the scopes':
      return route.tokenKinds.includes(caller.startsWith('oauth') ? 'oauth' : 'product') ? [...route.scopes] : undefined;
    case 'product missing one of the scopes':
      return route.scopes.slice(-1);
    case 'product with the scopes, plan below the gate':
      return route.scopes.filter((s) => GATED.has(s));
    default:
      return undefined;
  }
}

const DATA_MODE_CALLERS = new Map<Caller, 'anonymized' | 'blocked'>([
  ['product with the scopes, anonymized project', 'anonymized'],
  ['product with the scopes, blocked project', 'blocked'],
]);
const dataModeOf = (caller: Caller) => DATA_MODE_CALLERS.get(caller) ?? null;
/** The project a caller's paths name: its data-mode project, the plan-s one, or the home project. */
function projectOf(f: Fixture, caller: Caller): string {
  const mode = dataModeOf(caller);
  if (mode) return f.modeProjects[mode];
  return caller === 'product with the scopes, plan below the gate' ? f.smallProject : f.project;
}

/** The expected answer; '2xx' is whatever success the owning app gives. */
function expected(route: PublicRoute, caller: Caller): number | '2xx' | undefined {
  const accepts = (k: 'product' | 'datasource' | 'oauth') => route.tokenKinds.includes(k);
  // The ingest API (a data source's stream routes) refuses a token's kind or scopes with 404: its error table has no 403 (ADR 0009).
  const denied = route.dataSourceParam ? 404 : 403;
  switch (caller) {
    case 'none':
    case 'malformed':
    case 'unknown':
    case 'revoked':
      return 401;
    case 'other organization':
      return !accepts('product') ? 403 : route.projectParam ? 404 : '2xx';
    case 'project not listed':
      return !accepts('product') ? 403 : route.projectParam ? 404 : '2xx';
    case 'data source (own)':
      return accepts('datasource') ? '2xx' : 403;
    case 'data source (other)':
      return !accepts('datasource') ? 403 : route.dataSourceParam ? 404 : '2xx';
    case 'oauth with the scopes':
      return accepts('oauth') ? (APP_ANSWERS[route.id] ?? '2xx') : denied;
    case 'oauth without the scopes':
      // Every product scope but the route's (the grant is the token's limit); the ingest routes refuse OAuth tokens by kind above.
      return route.scopes.length === 0 || !accepts('oauth') ? undefined : 403;
    case 'oauth, project not granted':
      // Every product scope, granted for another project of the organization than the path's.
      return !accepts('oauth') ? denied : route.projectParam ? 404 : '2xx';
    case 'oauth expired':
    case 'oauth for another resource':
      return 401;
    case 'product without the scopes':
      // Every scope but the route's: only meaningful when the route requires some.
      return route.scopes.length === 0 ? undefined : denied;
    case 'product missing one of the scopes':
      // All of the route's scopes but its last: a route needing several needs every one.
      return route.scopes.length < 2 ? undefined : denied;
    case 'product with the scopes':
      return accepts('product') ? (APP_ANSWERS[route.id] ?? '2xx') : 403;
    case 'product with the scopes, plan below the gate':
      // Granted, but not unlocked by the organization's plan: refused as if not granted (ADR 0328).
      return route.scopes.some((s) => GATED.has(s)) ? denied : undefined;
    case 'product with the scopes, anonymized project':
    case 'product with the scopes, blocked project':
      // Only routes of a project (without a data source in the path) read contact data under a data mode.
      if (!route.projectParam || route.dataSourceParam || !accepts('product')) return undefined;
      return DATA_MODE_ANSWERS[dataModeOf(caller)!][route.id] ?? APP_ANSWERS[route.id] ?? '2xx';
  }
}

const CALLERS: Caller[] = [
  'none',
  'malformed',
  'unknown',
  'revoked',
  'other organization',
  'project not listed',
  'data source (own)',
  'data source (other)',
  'oauth with the scopes',
  'oauth without the scopes',
  'oauth, project not granted',
  'oauth expired',
  'oauth for another resource',
  'product without the scopes',
  'product missing one of the scopes',
  'product with the scopes',
  'product with the scopes, plan below the gate',
  'product with the scopes, anonymized project',
  'product with the scopes, blocked project',
];
const cases = PUBLIC_ROUTES.flatMap((route) =>
  CALLERS.map((caller) => ({ route, caller, want: expected(route, caller) })).filter((c): c is { route: PublicRoute; caller: Caller; want: number | '2xx' } => c.want !== undefined),
);

function authorization(f: Fixture, route: PublicRoute, caller: Caller): string | undefined {
  switch (caller) {
    case 'none':
      return undefined;
    case 'malformed':
      return 'Bearer not-a-meld-token';
    case 'unknown':
      return `Bearer mld_pt_${'A'.repeat(43)}`;
    default:
      return `Bearer ${f.tokens[tokenName(route, caller)].token}`;
  }
}

const tokenName = (route: PublicRoute, caller: Caller) => (caller.includes('scopes') ? `${caller}:${route.id}` : caller);

describe('authorization matrix (generated from the route table)', () => {
  let supervisor: { ready(ms: number): Promise<void>; stop(): Promise<void> };
  let db: DataSource;
  const f = {} as Fixture;

  beforeAll(async () => {
    testEnv();
    if (!process.env.MELD_ADMIN_TOKEN) throw new Error('MELD_ADMIN_TOKEN is not set (npm test sets it)');
    db = await openTestDb();
    supervisor = startApps({
      env: {
        ...process.env,
        LOG_LEVEL: 'warn',
        // The matrix sends hundreds of requests, many unauthenticated, from one IP.
        MELD_RATE_LIMITS: JSON.stringify({ large: { limit: 100000 }, standard: { limit: 100000 }, probes: { limit: 100000 }, ingest: { limit: 100000 }, anonymous: { limit: 100000 }, authFailures: { limit: 100000 }, oauth: { limit: 100000 } }),
        MELD_RATE_LIMIT_NAMESPACE: `authz-matrix-${process.pid}`,
        MELD_PLAN_GATED_SCOPES: PLAN_GATED_SCOPES.map((s) => `${s}=${GATE_PLAN}`).join(','),
      },
      gatewayPort: GATEWAY_PORT,
      logDir: join(__dirname, '../../.stack/logs/e2e-authz'),
    });
    await supervisor.ready(90000);

    const org = async (plan: 's' | typeof GATE_PLAN = 's') => (await admin('POST', '/organizations', { name: `authz-${randomUUID().slice(0, 8)}`, plan })).entity.id;
    const project = async (o: string, dataMode?: 'anonymized' | 'blocked') => (await admin('POST', `/organizations/${o}/projects`, { name: 'Matrix project', ...(dataMode ? { dataMode } : {}) })).entity.uid!;
    const dataSource = async (p: string) => {
      const created = await admin('POST', `/projects/${p}/datasources`, { name: `source-${randomUUID().slice(0, 8)}` });
      return { id: created.entity.id, token: created.metadata!.token! };
    };
    const [home, other, small] = [await org(GATE_PLAN), await org(), await org('s')];
    const [homeProject, sideProject] = [await project(home), await project(home)];
    const [own, sibling] = [await dataSource(homeProject), await dataSource(homeProject)];
    const modeProjects = { anonymized: await project(home, 'anonymized'), blocked: await project(home, 'blocked') };
    const smallProject = await project(small);
    for (const p of [homeProject, ...Object.values(modeProjects)]) await admin('POST', `/projects/${p}/event-types`, { uid: 'order_completed', name: 'Order completed', category: 'ecommerce' });
    await project(other); // the other organization has a project of its own too

    const everything = [...ALL_SCOPES];
    const revoked = await productToken(home, everything, ['*']);
    // Cached by the gateway first, so the 401s below prove the revocation reaches it at once.
    expect((await fetch(`${BASE}/v1/`, { headers: { authorization: `Bearer ${revoked.token}` } })).status).toBe(200);
    await admin('DELETE', `/tokens/${revoked.id}`);
    const tokens: Fixture['tokens'] = {
      revoked,
      'other organization': await productToken(other, everything, ['*']),
      'project not listed': await productToken(home, everything, [sideProject]),
      'data source (own)': own,
      'data source (other)': sibling,
    };
    // The consent screen grants the sensitive scopes only where the operator allowed them (ADR 0144).
    await admin('PATCH', `/organizations/${home}`, { oauthSensitiveScopes: true });
    const user = { email: `matrix-${randomUUID().slice(0, 8)}@example.test`, password: 'matrix password' };
    await admin('POST', `/organizations/${home}/users`, user);
    const oauth = new Map<string, Promise<{ token: string }>>();
    const oauthToken = (scopes: readonly Scope[], projects = [homeProject]) => {
      const key = `${scopes.join(' ')} for ${projects.join(' ')}`;
      if (!oauth.has(key)) oauth.set(key, oauthTokens(BASE, user, { scope: scopes.join(' ') || undefined, projects }).then((t) => ({ token: t.accessToken })));
      return oauth.get(key)!;
    };
    tokens['oauth, project not granted'] = await oauthToken(PRODUCT_SCOPES, [sideProject]);
    // Made expired, or bound to another resource than this API, where the gateway reads them (ADR 0146).
    const [expired, elsewhere] = [await oauthTokens(BASE, user, { projects: [homeProject] }), await oauthTokens(BASE, user, { projects: [homeProject] })];
    await db.query(`UPDATE tokens SET expires_at = now() - interval '1 minute' WHERE secret_hash = $1`, [hashToken(expired.accessToken)]);
    await db.query(`UPDATE tokens SET resource = 'https://elsewhere.example/v1' WHERE secret_hash = $1`, [hashToken(elsewhere.accessToken)]);
    tokens['oauth expired'] = { token: expired.accessToken };
    tokens['oauth for another resource'] = { token: elsewhere.accessToken };
    for (const route of PUBLIC_ROUTES) {
      tokens[`product without the scopes:${route.id}`] = await productToken(home, everything.filter((s) => !route.scopes.includes(s as Scope)), [homeProject]);
      tokens[`product with the scopes:${route.id}`] = await productToken(home, route.scopes, [homeProject]);
      // Ingest scopes are never granted to OAuth clients (ADR 0144); those routes refuse OAuth tokens anyway.
      tokens[`oauth with the scopes:${route.id}`] = await oauthToken(route.tokenKinds.includes('oauth') ? route.scopes : []);
      // Only where the matrix expects an answer (see expected()).
      if (route.scopes.length > 1) tokens[`product missing one of the scopes:${route.id}`] = await productToken(home, route.scopes.slice(0, -1), [homeProject]);
      if (route.scopes.some((s) => GATED.has(s))) tokens[`product with the scopes, plan below the gate:${route.id}`] = await productToken(small, route.scopes, [smallProject]);
      if (route.scopes.length && route.tokenKinds.includes('oauth')) tokens[`oauth without the scopes:${route.id}`] = await oauthToken(PRODUCT_SCOPES.filter((s) => !route.scopes.includes(s)));
      for (const [caller, mode] of DATA_MODE_CALLERS) tokens[`${caller}:${route.id}`] = await productToken(home, route.scopes, [modeProjects[mode]]);
    }
    const userIds = Array.from({ length: CALLERS.length }, (_, i) => `matrix-delete-${i}`);
    const seeded = await fetch(`${BASE}/v1/project/${homeProject}/datasource/${own.id}/stream/contacts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${own.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(userIds.map((id) => ({ _user_id: id }))),
    });
    expect(seeded.status).toBe(202);
    Object.assign(f, { project: homeProject, smallProject, modeProjects, dataSource: own.id, eventType: 'order_completed', userIds, tokens });
  }, 180000);

  afterAll(async () => {
    await supervisor?.stop();
    await db?.destroy();
  });

  it('every route has an example for each of its path parameters', () => {
    for (const route of PUBLIC_ROUTES) for (const p of routeParams(route.path)) expect([route.id, p, p in EXAMPLE_PARAMS]).toEqual([route.id, p, true]);
  });

  it.each(cases.map((c) => [`${c.route.method} ${c.route.path}`, c.caller, String(c.want), c]))('%s as %s → %s', async (_name, _caller, _want, c) => {
    const { route, caller, want } = c as (typeof cases)[number];
    const params = { ...f, project: projectOf(f, caller) };
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, (_, p: string) => encodeURIComponent(EXAMPLE_PARAMS[p](params)));
    const auth = authorization(f, route, caller);
    const body = EXAMPLE_BODIES[route.id];
    const res = await fetch(`${BASE}${path}`, {
      method: route.method,
      headers: { ...(auth ? { authorization: auth } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const got = res.status >= 200 && res.status < 300 ? '2xx' : res.status;
    expect({ status: got, body: got === want ? undefined : text }).toEqual({ status: want, body: undefined });
    // Every answer, refused or not, carries the rate-limit headers and a request id.
    expect(res.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    if (typeof want === 'number') expect(JSON.parse(text)).toMatchObject({ statusCode: want, error: expect.any(String), message: expect.any(String) });
    // A scope refusal names exactly the scopes the token is short of, whichever the status (ADR 0009).
    const missing = typeof want === 'number' && want !== 401 ? missingScopes(route, caller) : undefined;
    if (missing?.length) {
      const { details } = JSON.parse(text);
      // Scopes granted but not unlocked by the plan are said to be so (ADR 0328), and only those.
      const gated = caller === 'product with the scopes, plan below the gate' ? missing : undefined;
      expect([route.id, details?.missingScopes, details?.planGatedScopes]).toEqual([route.id, missing, gated]);
    }
  });
});
