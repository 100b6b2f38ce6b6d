import crypto, { randomUUID } from 'node:crypto';
import { devPrincipalKey, encodePrincipal } from '@meld/auth';
import { CHANNEL_GROUPS } from '@meld/contracts';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner';
import { ProjectReadSchema } from '../src/project/project-read.schema';
import { startAudience } from './app.fixture';
import { type Json, principalHeader, seedTenancy } from '@meld/fixtures';

// The Project table of the product spec, field by field with its observed type; written
// out here (not taken from our schema) so the test checks the code against the spec.
const SPEC_FIELDS: Record<string, 'string' | 'string|null' | 'integer' | 'array' | 'object' | 'object|null' | 'null|string'> = {
  id: 'string',
  uid: 'string',
  name: 'string',
  description: 'string|null',
  projectType: 'string',
  projectStatus: 'string',
  locale: 'string',
  timezone: 'string',
  defaultSmsSender: 'string|null',
  shortTrackingDomain: 'string|null',
  unsubscribeTrackingDomain: 'string|null',
  businessType: 'string|null',
  businessContactsSize: 'integer',
  businessUrl: 'string',
  lockedUntil: 'null|string',
  lockedReason: 'null|string',
  testSmsNumbers: 'array',
  conversionConfig: 'object|null',
  attributionConfig: 'object',
  generalConfig: 'object',
  brand: 'object|null',
  createdAt: 'string',
  updatedAt: 'string',
};
const CHANNEL_FIELDS = ['defaultCompliancePolicy', 'optInKeywords', 'optOutKeywords', 'autoCreateContactsOnInbounds', 'autoCreateContactsOnOutbounds', 'marketingOptOutScope', 'marketingOptInScope'];
const ATTRIBUTION_FIELDS = ['hoursSmsCampaignSent', 'hoursOtherCampaignSent', 'hoursCampaignCta', 'hoursCampaignOpen', 'hoursFindOutboundSms'];
const OFFSET_TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?[+-]\d\d:\d\d$/;

const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);

describe('GET /v1/project/:project (audience)', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let tenancy: Awaited<ReturnType<typeof seedTenancy>>;

  beforeAll(async () => {
    ({ app, base, db } = await startAudience());
    tenancy = await seedTenancy(db);
  });
  afterAll(() => app?.close());

  type Opts = Parameters<typeof principalHeader>[1];
  /** `null`: no principal at all. */
  const read = (opts: Opts | null, uid = tenancy.project.uid) => {
    const url = `${base}/v1/project/${uid}`;
    return fetch(url, { headers: opts ? principalHeader(tenancy, opts, { app: 'audience', url }) : {} });
  };

  it('returns every Project field of the spec with its type, generalConfig with its five blocks, attributionConfig', async () => {
    const res = await read({ scopes: ['PROJECT_AUDIENCE_READ'] });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { entity: Record<string, Json>; metadata: Record<string, Json> };
    expect(Object.keys(body.entity).sort()).toEqual(Object.keys(SPEC_FIELDS).sort());
    for (const [field, type] of Object.entries(SPEC_FIELDS)) expect([field, type.split('|')]).toEqual([field, expect.arrayContaining([typeOf(body.entity[field])])]);
    expect(body.entity.createdAt).toMatch(OFFSET_TIMESTAMP);
    expect(body.entity.updatedAt).toMatch(OFFSET_TIMESTAMP);
    expect(Object.keys(body.entity.generalConfig).sort()).toEqual([...CHANNEL_GROUPS].sort());
    for (const group of CHANNEL_GROUPS) expect(Object.keys(body.entity.generalConfig[group]).sort()).toEqual([...CHANNEL_FIELDS].sort());
    expect(Object.keys(body.entity.attributionConfig).sort()).toEqual([...ATTRIBUTION_FIELDS].sort());
    for (const f of ATTRIBUTION_FIELDS) expect(Number.isInteger(body.entity.attributionConfig[f])).toBe(true);
    expect(ProjectReadSchema.parse(body)).toBeTruthy();
    expect(body.entity).toMatchObject({ id: tenancy.project.id, uid: tenancy.project.uid });
  });

  it('reads the project and its organization in one Postgres round trip (ADR 0209), straight from the pool (ADR 0233)', async () => {
    const pool = jest.spyOn((db.driver as unknown as { master: { query: (sql: string) => unknown } }).master, 'query');
    const runner = jest.spyOn(PostgresQueryRunner.prototype, 'query');
    try {
      expect((await read({ scopes: ['PROJECT_AUDIENCE_READ'] })).status).toBe(200);
      const reads = pool.mock.calls.filter(([sql]) => /\b(projects|organizations)\b/.test(String(sql)));
      expect(reads).toHaveLength(1);
      expect(runner).not.toHaveBeenCalled();
    } finally {
      pool.mockRestore();
      runner.mockRestore();
    }
  });

  it('refuses a principal signed with another app\'s key, one replayed on another path, and a forged one (ADR 0256)', async () => {
    const url = `${base}/v1/project/${tenancy.project.uid}`;
    const requestId = randomUUID();
    const caller = { kind: 'admin' as const, tokenId: null, organizationId: tenancy.organization.id, plan: null, scopes: [], project: null, dataSourceId: null, requestId };
    const binding = { method: 'GET', url: `/v1/project/${tenancy.project.uid}`, app: 'audience' };
    // What a compromised ingest could make with its own key: a principal naming the audience app.
    const fromIngest = encodePrincipal(caller, binding, devPrincipalKey('ingest'));
    const refused = await fetch(url, { headers: { 'x-meld-principal': fromIngest, 'x-request-id': requestId } });
    expect([refused.status, ((await refused.json()) as { message: string }).message]).toEqual([401, 'invalid principal signature']);
    const good = principalHeader(tenancy, { scopes: ['PROJECT_AUDIENCE_READ'] }, { app: 'audience', url });
    expect((await fetch(`${url}?other=1`, { headers: good })).status).toBe(401);
    const [payload] = good['x-meld-principal']!.split('.');
    const forged = `${payload}.${crypto.createHmac('sha256', 'guessed').update(payload!).digest('base64url')}`;
    expect((await fetch(url, { headers: { ...good, 'x-meld-principal': forged } })).status).toBe(401);
    expect((await fetch(url, { headers: good })).status).toBe(200);
  });

  it('answers a principal that reached it late with 503 and Retry-After, not a 401 that calls the token bad (ADR 0102)', async () => {
    const url = `${base}/v1/project/${tenancy.project.uid}`;
    const requestId = randomUUID();
    const caller = { kind: 'admin' as const, tokenId: null, organizationId: tenancy.organization.id, plan: null, scopes: [], project: null, dataSourceId: null, requestId };
    const binding = { method: 'GET', url: `/v1/project/${tenancy.project.uid}`, app: 'audience' };
    // Signed by the gateway 6 s ago for this very request: held up inside Meld on its way here.
    const late = encodePrincipal(caller, binding, devPrincipalKey('audience'), Date.now() - 6_000);
    const res = await fetch(url, { headers: { 'x-meld-principal': late, 'x-request-id': requestId } });
    expect([res.status, res.headers.get('retry-after')]).toEqual([503, '1']);
    expect(await res.json()).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'the request took more than 5 s to reach the audience service inside Meld; nothing was done: retry after Retry-After seconds',
    });
    // The same late header replayed for another request is still a refusal.
    const replayed = await fetch(url, { headers: { 'x-meld-principal': late, 'x-request-id': randomUUID() } });
    expect([replayed.status, replayed.headers.get('retry-after'), ((await replayed.json()) as { message: string }).message]).toEqual([401, null, 'principal signed for another request']);
  });

  it('checks the principal with its key parsed at start-up, never a key parsed or derived per request (ADR 0256)', async () => {
    expect((await read({ scopes: ['PROJECT_AUDIENCE_READ'] })).status).toBe(200);
    const parsed = jest.spyOn(crypto, 'createSecretKey');
    const derived = jest.spyOn(crypto, 'hkdfSync');
    try {
      expect((await read({ scopes: ['PROJECT_AUDIENCE_READ'] })).status).toBe(200);
      expect([parsed.mock.calls.length, derived.mock.calls.length]).toEqual([0, 0]);
    } finally {
      parsed.mockRestore();
      derived.mockRestore();
    }
  });

  it('reports uniqueAttributes, the organization summary without funds, and the scopes', async () => {
    const body = (await (await read({ scopes: ['PROJECT_AUDIENCE_READ'] })).json()) as { metadata: Record<string, unknown> };
    expect(body.metadata).toEqual({
      uniqueAttributes: ['_user_id', '_email'],
      organization: { id: tenancy.organization.id, name: tenancy.organization.name, plan: 'm', apiTier: 'standard' },
      scopes: ['PROJECT_AUDIENCE_READ'],
    });
  });

  it('shows the funds only with ACCOUNT_READ; uniqueAttributes is there even with no merging attributes', async () => {
    await db.query('UPDATE projects SET merging_attributes = $1 WHERE id = $2', ['{}', tenancy.project.id]);
    const body = (await (await read({ scopes: ['ACCOUNT_READ'] })).json()) as { metadata: { organization: Record<string, unknown>; uniqueAttributes: string[] } };
    expect(body.metadata.organization.funds).toBe(42.5);
    expect(body.metadata.uniqueAttributes).toEqual(['_user_id']);
    await db.query('UPDATE projects SET merging_attributes = $1 WHERE id = $2', ['{_email}', tenancy.project.id]);
  });

  it('answers 404 when the path names another project than the principal, 401 without a principal', async () => {
    const other = await seedTenancy(db);
    const res = await read({}, other.project.uid);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ statusCode: 404, error: 'Not Found', message: 'project not found' });
    expect((await read(null)).status).toBe(401);
  });
});
