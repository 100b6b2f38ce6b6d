import { TOKEN_REVOKED_CHANNEL, hashToken } from '@meld/auth';
import { DATA_SOURCE, TokenEntity } from '@meld/db';
import { DataSourceSchema } from '@meld/api';
import { testEnv } from '@meld/testing';
import Redis from 'ioredis';
import type { DataSource } from 'typeorm';
import { type AdminGateway, startAdminGateway, unique } from './admin-support/admin-gateway';
import { UNKNOWN_ID, createOrganization, createProject, fieldsOf } from './admin-support/fixtures';

describe('admin: data sources and tokens', () => {
  let gw: AdminGateway;
  let db: DataSource;
  let org: string;
  let project: { id: string; uid: string };
  beforeAll(async () => {
    gw = await startAdminGateway();
    db = gw.app.get(DATA_SOURCE);
    org = await createOrganization(gw);
    project = await createProject(gw, org);
  });
  afterAll(() => gw?.close());

  it('creates a data source with its data-source token, shown once and stored only as a hash', async () => {
    const res = await gw.call('POST', `/projects/${project.uid}/datasources`, { name: 'Web shop' });
    expect(res.status).toBe(201);
    expect(DataSourceSchema.strict().parse(res.body.entity)).toMatchObject({ uid: 'web-shop', name: 'Web shop', connector: 'api', priority: 0 });
    expect(res.body.metadata).toEqual({ project: project.uid, tokenId: expect.any(String), token: expect.stringMatching(/^mld_ds_/) });
    const stored = await db.getRepository(TokenEntity).findOneByOrFail({ id: res.body.metadata.tokenId });
    expect(stored).toMatchObject({ kind: 'datasource', dataSourceId: res.body.entity.id, projects: [project.uid], secretHash: hashToken(res.body.metadata.token) });
    expect(JSON.stringify(stored)).not.toContain(res.body.metadata.token);

    const second = await gw.call('POST', `/projects/${project.uid}/datasources`, { name: 'Web shop', connector: 'shopify', priority: 5 });
    expect(second.body.entity).toMatchObject({ uid: expect.stringMatching(/^web-shop-[0-9a-f]{4}$/), connector: 'shopify', priority: 5 });
    expect((await gw.call('POST', `/projects/${project.uid}/datasources`, { name: 'x', uid: 'web-shop' })).status).toBe(409);
    expect(fieldsOf((await gw.call('POST', `/projects/${project.uid}/datasources`, { name: 'x', priority: 1.5 })).body)).toEqual([['priority', expect.any(String)]]);
    expect((await gw.call('POST', `/projects/${unique('nope')}/datasources`, { name: 'x' })).status).toBe(404);
    const list = await gw.call('GET', `/projects/${project.uid}/datasources`);
    expect(list.body.entity.map((d: { uid: string }) => d.uid)).toEqual(expect.arrayContaining(['web-shop', second.body.entity.uid]));
  });

  it('issues another token for a data source, by uid or id, for rotation; unknown sources and foreign projects are 404', async () => {
    const created = await gw.call('POST', `/projects/${project.uid}/datasources`, { name: 'Rotated' });
    const source = created.body.entity as { id: string; uid: string };
    const byUid = await gw.call('POST', `/projects/${project.uid}/datasources/${source.uid}/tokens`);
    expect(byUid.status).toBe(201);
    expect(byUid.body.entity).toMatchObject({ kind: 'datasource', dataSourceId: source.id, projects: [project.uid], label: `data source ${source.uid}`, revokedAt: null });
    expect(byUid.body.metadata).toEqual({ token: expect.stringMatching(/^mld_ds_/) });
    expect(byUid.body.metadata.token).not.toBe(created.body.metadata.token);
    const stored = await db.getRepository(TokenEntity).findOneByOrFail({ id: byUid.body.entity.id });
    expect(stored).toMatchObject({ dataSourceId: source.id, secretHash: hashToken(byUid.body.metadata.token) });
    const byId = await gw.call('POST', `/projects/${project.uid}/datasources/${source.id}/tokens`, { label: 'rotated in November' });
    expect(byId.body.entity).toMatchObject({ dataSourceId: source.id, label: 'rotated in November' });
    // The first token is untouched: both work until the operator revokes the old one.
    const listed = (await gw.call('GET', `/organizations/${org}/tokens`)).body.entity.filter((t: { dataSourceId: string | null }) => t.dataSourceId === source.id);
    expect(listed.map((t: { id: string; revokedAt: string | null }) => [t.id, t.revokedAt]).sort()).toEqual(
      [created.body.metadata.tokenId, byUid.body.entity.id, byId.body.entity.id].map((id) => [id, null]).sort(),
    );

    const other = await createProject(gw, org);
    const missing = await gw.call('POST', `/projects/${other.uid}/datasources/${source.uid}/tokens`);
    expect([missing.status, missing.body.message]).toEqual([404, `data source "${source.uid}" not found in project "${other.uid}"`]);
    expect((await gw.call('POST', `/projects/${other.uid}/datasources/${source.id}/tokens`)).status).toBe(404);
    expect((await gw.call('POST', `/projects/${project.uid}/datasources/${UNKNOWN_ID}/tokens`)).status).toBe(404);
    expect((await gw.call('POST', `/projects/${unique('nope')}/datasources/${source.uid}/tokens`)).status).toBe(404);
    expect(fieldsOf((await gw.call('POST', `/projects/${project.uid}/datasources/${source.uid}/tokens`, { scopes: ['PROJECT_AUDIENCE_READ'] })).body)).toEqual([['scopes', 'unknown field']]);
  });

  it('issues a product token with scopes and projects; the secret is never listed', async () => {
    const res = await gw.call('POST', `/organizations/${org}/tokens`, { scopes: ['PROJECT_AUDIENCE_READ', 'ACCOUNT_READ'], projects: [project.uid], label: 'crm sync' });
    expect(res.status).toBe(201);
    expect(res.body.entity).toMatchObject({ kind: 'product', scopes: ['PROJECT_AUDIENCE_READ', 'ACCOUNT_READ'], projects: [project.uid], label: 'crm sync', revokedAt: null });
    expect(res.body.metadata.token).toMatch(/^mld_pt_/);
    expect(res.body.metadata.token.startsWith(res.body.entity.prefix)).toBe(true);
    const all = await gw.call('POST', `/organizations/${org}/tokens`, { scopes: ['PROJECT_DIRECT_WRITE'], projects: ['*'] });
    expect(all.body.entity.projects).toEqual(['*']);
    const list = await gw.call('GET', `/organizations/${org}/tokens`);
    expect(list.body.entity.map((t: { id: string }) => t.id)).toEqual(expect.arrayContaining([res.body.entity.id, all.body.entity.id]));
    expect(JSON.stringify(list.body)).not.toContain(res.body.metadata.token);
  });

  it('refuses unknown scopes, foreign or unknown projects, and "*" mixed with uids', async () => {
    const foreign = await createProject(gw, await createOrganization(gw));
    const cases: [Record<string, unknown>, string][] = [
      [{ scopes: ['PROJECT_AUDIENCE_READ', 'GOD_MODE'], projects: ['*'] }, 'scopes[1]'],
      [{ scopes: [], projects: ['*'] }, 'scopes'],
      [{ scopes: ['ACCOUNT_READ'], projects: [project.uid, foreign.uid] }, 'projects[1]'],
      [{ scopes: ['ACCOUNT_READ'], projects: ['*', project.uid] }, 'projects'],
      [{ scopes: ['ACCOUNT_READ'] }, 'projects'],
    ];
    for (const [body, path] of cases) {
      const res = await gw.call('POST', `/organizations/${org}/tokens`, body);
      expect([path, res.status]).toEqual([path, 400]);
      expect(fieldsOf(res.body).map(([p]) => p)).toEqual([path]);
    }
    expect((await gw.call('POST', `/organizations/${UNKNOWN_ID}/tokens`, { scopes: ['ACCOUNT_READ'], projects: ['*'] })).status).toBe(404);
  });

  it('revokes a token (204), publishes its id for the gateways, and keeps the first revocation time', async () => {
    const created = await gw.call('POST', `/organizations/${org}/tokens`, { scopes: ['ACCOUNT_READ'], projects: ['*'] });
    const id = created.body.entity.id as string;
    const sub = new Redis(testEnv().redisUrl);
    const heard: string[] = [];
    try {
      await sub.subscribe(TOKEN_REVOKED_CHANNEL);
      sub.on('message', (_channel, message) => heard.push(message));
      const res = await gw.call('DELETE', `/tokens/${id}`);
      expect(res.status).toBe(204);
      expect(res.body).toBeUndefined();
      const first = (await db.getRepository(TokenEntity).findOneByOrFail({ id })).revokedAt;
      expect(first).toBeInstanceOf(Date);
      expect((await gw.call('DELETE', `/tokens/${id}`)).status).toBe(204);
      expect((await db.getRepository(TokenEntity).findOneByOrFail({ id })).revokedAt).toEqual(first);
      for (let i = 0; i < 250 && heard.filter((m) => m === id).length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      expect(heard.filter((m) => m === id)).toHaveLength(2);
    } finally {
      sub.disconnect();
    }
    const listed = (await gw.call('GET', `/organizations/${org}/tokens`)).body.entity.find((t: { id: string }) => t.id === id);
    expect(listed.revokedAt).toMatch(/\+00:00$/);
    for (const bad of [UNKNOWN_ID, 'nope']) expect((await gw.call('DELETE', `/tokens/${bad}`)).status).toBe(404);
  });
});
