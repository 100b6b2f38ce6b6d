import { RESERVED_ATTRIBUTES } from '@meld/contracts';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { StreamAttributeListSchema, StreamEventParameterListSchema, StreamEventTypeListSchema } from '../src/stream/stream-specs.schema';
import { StreamDescriptionSchema } from '../src/stream/usecases/describe-stream/describe-stream.schema';
import { startIngest } from './app.fixture';
import { type Json, type PrincipalSigner, principalSigner, seedTenancy } from '@meld/fixtures';

describe('stream reads (ingest)', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let tenancy: Awaited<ReturnType<typeof seedTenancy>>;
  let dsToken: PrincipalSigner;

  beforeAll(async () => {
    ({ app, base, db } = await startIngest());
    tenancy = await seedTenancy(db);
    dsToken = principalSigner(tenancy, { kind: 'datasource', scopes: ['PROJECT_INGEST_WRITE', 'PROJECT_INGEST_READ'], dataSourceId: tenancy.dataSource.id }, 'ingest');
  });
  afterAll(() => app?.close());

  const get = async (path: string, sign: PrincipalSigner = dsToken, dataSourceId = tenancy.dataSource.id, extra: Record<string, string> = {}) => {
    const url = `${base}/v1/project/${tenancy.project.uid}/datasource/${dataSourceId}/stream${path}`;
    const res = await fetch(url, { headers: { ...sign('GET', url), ...extra } });
    return { status: res.status, body: (await res.json()) as Json };
  };

  it('GET /stream describes organization, project, data source and the rate-limit usage the gateway forwarded', async () => {
    const { status, body } = await get('', dsToken, undefined, { 'x-meld-ratelimit-limit': '3000', 'x-meld-ratelimit-remaining': '2999', 'x-meld-ratelimit-reset': '1790000060' });
    expect(status).toBe(200);
    expect(StreamDescriptionSchema.parse(body)).toBeTruthy();
    expect(body.entity).toEqual({
      organization: { id: tenancy.organization.id, name: tenancy.organization.name, plan: 'm', apiTier: 'standard' },
      project: { id: tenancy.project.id, uid: tenancy.project.uid, name: tenancy.project.name, timezone: 'UTC' },
      datasource: { id: tenancy.dataSource.id, uid: tenancy.dataSource.uid, name: 'Web', connector: 'api', priority: 0, createdAt: expect.stringMatching(/\+00:00$/) },
      usage: { rateLimit: { limit: 3000, remaining: 2999, reset: 1790000060, window: 'minute' } },
    });
    expect(body.metadata).toEqual({ tokenKind: 'datasource', scopes: ['PROJECT_INGEST_WRITE', 'PROJECT_INGEST_READ'] });
    expect((await get('')).body.entity.usage).toEqual({ rateLimit: null });
  });

  it('serves a product token on any data source of its project', async () => {
    const product = principalSigner(tenancy, { scopes: ['PROJECT_INGEST_READ'] }, 'ingest');
    expect((await get('', product)).status).toBe(200);
  });

  it('answers 404 for a data source of another project, another data source than the token, or a malformed id', async () => {
    const other = await seedTenancy(db);
    const product = principalSigner(tenancy, { scopes: ['PROJECT_INGEST_READ'] }, 'ingest');
    expect(await get('', product, other.dataSource.id)).toEqual({ status: 404, body: { statusCode: 404, error: 'Not Found', message: 'data source not found' } });
    const sibling = await db.query(`INSERT INTO data_sources (project_id, uid, name) VALUES ($1, 'sibling', 'Sibling') RETURNING id`, [tenancy.project.id]);
    expect((await get('', dsToken, sibling[0].id)).status).toBe(404);
    expect((await get('/specs/attributes', dsToken, sibling[0].id)).status).toBe(404);
    expect((await get('', product, sibling[0].id)).status).toBe(200);
    expect((await get('', dsToken, 'not-a-uuid')).status).toBe(404);
    expect((await get('', () => ({}))).status).toBe(401);
  });

  it('lists the attributes the data source accepts: enabled and not internal', async () => {
    const { status, body } = await get('/specs/attributes');
    expect(status).toBe(200);
    expect(StreamAttributeListSchema.parse(body)).toBeTruthy();
    const uids = body.entity.map((a: { uid: string }) => a.uid);
    const expected = [...RESERVED_ATTRIBUTES.filter((a) => a.enabled && !a.internal).map((a) => a.uid), 'loyalty_tier'];
    expect([...uids].sort()).toEqual(expected.sort());
    expect(uids).not.toContain('_datasources');
    expect(uids).not.toContain('legacy_score');
  });

  it('lists event types and the parameters of one; an unknown type is 404', async () => {
    const events = await get('/specs/events');
    expect(StreamEventTypeListSchema.parse(events.body).entity.map((e) => e.uid)).toEqual(['purchase']);
    const params = await get('/specs/events/purchase');
    expect(params.status).toBe(200);
    expect(StreamEventParameterListSchema.parse(params.body).entity.map((p) => p.parameter)).toEqual(['amount', 'product-id']);
    expect((await get('/specs/events/refund')).status).toBe(404);
  });
});
