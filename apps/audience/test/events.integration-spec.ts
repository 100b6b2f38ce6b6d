import { randomUUID } from 'node:crypto';
import type { ClickHouse } from '@meld/clickhouse';
import { AUDIENCE_EVENTS_ROUTE, type DataMode, type Plan, type Scope } from '@meld/contracts';
import { seedTenancy, signedPrincipal, startAppUnderTest, type Json } from '@meld/fixtures';
import { migratedTestClickHouse } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { appDefinition } from '../src/app.definition';

const ALL: Scope[] = ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_EVENTS'];
const DAY = 86_400;

/**
 * GET /v1/project/:project/audience/:audienceId/events on the audience app, with events and
 * memberships written to ClickHouse as the probes sinks write them (apps/probes/test covers
 * the sinks themselves).
 */
describe('audience events read', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let ch: ClickHouse;
  let tenancy: Awaited<ReturnType<typeof seedTenancy>>;
  const ds2 = randomUUID();
  const now = Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    ch = await migratedTestClickHouse();
    ({ app, base, db } = await startAppUnderTest(appDefinition));
    tenancy = await seedTenancy(db, 'events');
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
  });

  const headers = (url: string, { scopes = ALL, plan = 'm' as Plan | null, dataMode = 'normal' as DataMode } = {}) =>
    signedPrincipal(
      { kind: 'product', tokenId: randomUUID(), organizationId: tenancy.organization.id, plan, scopes, project: { id: tenancy.project.id, uid: tenancy.project.uid, dataMode }, dataSourceId: null },
      { app: 'audience', url },
    );
  const get = async (audienceId: string, query = '', opts: Parameters<typeof headers>[1] = {}): Promise<{ status: number; body: Json }> => {
    const url = `${base}/v1/project/${tenancy.project.uid}/audience/${audienceId}/events${query}`;
    const res = await fetch(url, { headers: headers(url, opts) });
    return { status: res.status, body: await res.json() };
  };
  const audience = async (id = randomUUID()) => {
    await db.query(`INSERT INTO audience_contacts (project_id, id, version) VALUES ($1, $2, 1)`, [tenancy.project.id, id]);
    return id;
  };
  let step = 0;
  /** A membership row as the probes sink writes it: later calls win. */
  const member = (dataSourceId: string, userId: string, audienceId: string, deleted = 0) =>
    ch.insert('audience_membership', [
      { project_id: tenancy.project.id, data_source_id: dataSourceId, user_id: userId, audience_id: audienceId, version: String(Date.now() * 2 + 1 + step++ * 2), deleted },
    ]);
  const events = (dataSourceId: string, userId: string, list: Array<{ id: string; ageDays?: number; type?: string; params?: Record<string, unknown> }>) =>
    ch.insert(
      'events',
      list.map((e) => {
        const keys = Object.keys(e.params ?? {}).sort();
        return {
          project_id: tenancy.project.id,
          data_source_id: dataSourceId,
          user_id: userId,
          event_id: e.id,
          event_type: e.type ?? 'purchase',
          event_date: now - Math.round((e.ageDays ?? 0) * DAY),
          received_at: now - Math.round((e.ageDays ?? 0) * DAY) + 1,
          param_keys: keys,
          param_values: keys.map((k) => JSON.stringify(e.params?.[k])),
        };
      }),
    );
  const ids = (body: Json) => (body.entity as Array<{ id: string }>).map((e) => e.id);

  it('is one route entry needing both scopes', () => {
    expect(AUDIENCE_EVENTS_ROUTE).toMatchObject({ method: 'GET', path: '/v1/project/:project/audience/:audienceId/events', app: 'audience' });
    expect([...AUDIENCE_EVENTS_ROUTE.scopes].sort()).toEqual([...ALL].sort());
  });

  it('is documented in the app\'s OpenAPI document', async () => {
    const doc: Json = await (await fetch(`${base}/openapi.json`)).json();
    const op = doc.paths['/v1/project/{project}/audience/{audienceId}/events'].get;
    expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '401', '403', '404', '422', '429', '503']);
    expect(op.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['_limit', '_start', 'audienceId', 'project']);
    expect(doc.components.schemas.AudienceEventList).toBeDefined();
  });

  it('lists a duplicated event id once, with its fields', async () => {
    const a = await audience();
    const ds = tenancy.dataSource.id;
    await member(ds, 'dup-user', a);
    await events(ds, 'dup-user', [{ id: 'e-dup', ageDays: 1, params: { amount: 12.5, 'product-id': 'p-1', tags: ['x'] } }]);
    await events(ds, 'dup-user', [{ id: 'e-dup', ageDays: 1, params: { amount: 12.5, 'product-id': 'p-1', tags: ['x'] } }]);
    const { status, body } = await get(a);
    expect(status).toBe(200);
    expect(body.entity).toEqual([
      {
        id: 'e-dup',
        type: 'purchase',
        date: new Date((now - DAY) * 1000).toISOString().replace('Z', '+00:00'),
        receivedAt: new Date((now - DAY + 1) * 1000).toISOString().replace('Z', '+00:00'),
        parameters: { amount: 12.5, 'product-id': 'p-1', tags: ['x'] },
        dataSourceId: ds,
      },
    ]);
    expect(body.metadata).toMatchObject({ audienceId: a, total: 1, count: 1, start: 0, limit: 50, lookBackDays: 90 });
  });

  it("applies the project's data mode to event parameters (ADR 0121): masked when anonymized or below Basic, refused when blocked", async () => {
    const a = await audience();
    const ds = tenancy.dataSource.id;
    await member(ds, 'pii-user', a);
    const params = { email: 'ada.lovelace@example.com', note: 'call +33 6 12 34 56 78 or mail ada@example.org', nested: { phones: ['0612345678'] }, amount: 12.5, sku: 'p-2026-01-01', sentTo: { 'ada.lovelace@example.com': 'ok' }, tel: '０９０－１２３４－５６７８', page: 'https://shop.example/?email=ada.lovelace%40example.com&tel=%2B33698765432', handy: '0171/1234567' };
    await events(ds, 'pii-user', [{ id: 'e-pii', ageDays: 1, params }]);
    const basic: Scope[] = [...ALL, 'PROJECT_AUDIENCE_DATA_BASIC'];
    const clear = await get(a, '', { scopes: basic });
    expect(clear.body.entity[0].parameters).toEqual(params);
    const masked = { email: 'a***@e***.com', note: 'call +33******78 or mail a***@e***.org', nested: { phones: ['06******78'] }, amount: 12.5, sku: 'p-2026-01-01', sentTo: { 'a***@e***.com': 'ok' }, tel: '０９******７８', page: 'https:/***%40e***.com&tel=%2B33******32', handy: '01******67' };
    for (const opts of [{ scopes: basic, dataMode: 'anonymized' as DataMode }, { scopes: ALL, dataMode: 'normal' as DataMode }]) {
      const res = await get(a, '', opts);
      expect(res.status).toBe(200);
      expect(res.body.entity[0].parameters).toEqual(masked);
      expect(JSON.stringify(res.body)).not.toMatch(/lovelace|12 34 56|0612345678|１２３４|698765432|171\/123/);
    }
    const blocked = await get(a, '', { scopes: basic, dataMode: 'blocked' });
    expect(blocked).toEqual({ status: 403, body: expect.objectContaining({ message: "this project's data mode is blocked: no contact data can be read" }) });
  });

  it('attaches the events of merged source contacts to the survivor, and back to their own after a split', async () => {
    const ds1 = tenancy.dataSource.id;
    const a = await audience();
    const b = await audience();
    await member(ds1, 'alice', a);
    await member(ds2, 'alice-crm', b);
    await events(ds1, 'alice', [{ id: 'web-1', ageDays: 2 }]);
    await events(ds2, 'alice-crm', [{ id: 'crm-1', ageDays: 1 }]);
    expect(ids((await get(a)).body)).toEqual(['web-1']);
    expect(ids((await get(b)).body)).toEqual(['crm-1']);

    // Merge: b absorbed into a (identity-merge: alias in Postgres, snapshot of a lists both).
    await db.query(`DELETE FROM audience_contacts WHERE project_id = $1 AND id = $2`, [tenancy.project.id, b]);
    await db.query(`INSERT INTO audience_aliases (project_id, absorbed_id, survivor_id) VALUES ($1, $2, $3)`, [tenancy.project.id, b, a]);
    await member(ds2, 'alice-crm', a);
    expect(ids((await get(a)).body)).toEqual(['crm-1', 'web-1']);
    const viaAlias = await get(b);
    expect(viaAlias.status).toBe(200);
    expect(viaAlias.body.metadata.audienceId).toBe(a);
    expect(ids(viaAlias.body)).toEqual(['crm-1', 'web-1']);

    // Split: alice-crm continues under a new audience contact.
    const c = await audience();
    await member(ds2, 'alice-crm', c);
    expect(ids((await get(a)).body)).toEqual(['web-1']);
    expect(ids((await get(c)).body)).toEqual(['crm-1']);

    // A removed member (deleted source contact) attaches to nobody.
    await member(ds2, 'alice-crm', c, 1);
    expect(ids((await get(c)).body)).toEqual([]);
  });

  it('answers 404 for an unknown or tombstoned audience id, 403 without both scopes', async () => {
    expect((await get(randomUUID())).status).toBe(404);
    expect((await get('not-a-uuid')).status).toBe(404);
    const gone = randomUUID();
    const survivor = randomUUID(); // absorbed, then its survivor was tombstoned
    await db.query(`INSERT INTO audience_aliases (project_id, absorbed_id, survivor_id) VALUES ($1, $2, $3)`, [tenancy.project.id, gone, survivor]);
    expect((await get(gone)).status).toBe(404);
    const a = await audience();
    expect((await get(a, '', { scopes: ['PROJECT_AUDIENCE_READ'] })).status).toBe(403);
    expect((await get(a, '', { scopes: ['PROJECT_AUDIENCE_DATA_EVENTS'] })).status).toBe(403);
    expect((await get(a)).status).toBe(200);
  });

  it('bounds the look-back by plan and says so', async () => {
    const a = await audience();
    const ds = tenancy.dataSource.id;
    await member(ds, 'old-timer', a);
    await events(ds, 'old-timer', [
      { id: 'd10', ageDays: 10 },
      { id: 'd60', ageDays: 60 },
      { id: 'd120', ageDays: 120 },
      { id: 'd200', ageDays: 200 },
      { id: 'd400', ageDays: 400 },
    ]);
    const expected: Array<[Plan | null, number, string[]]> = [
      ['s', 30, ['d10']],
      ['m', 90, ['d10', 'd60']],
      ['l', 180, ['d10', 'd60', 'd120']],
      ['xl', 365, ['d10', 'd60', 'd120', 'd200']],
      [null, 30, ['d10']],
    ];
    for (const [plan, days, list] of expected) {
      const { status, body } = await get(a, '', { plan });
      expect(status).toBe(200);
      expect(ids(body)).toEqual(list);
      expect(body.metadata).toMatchObject({ lookBackDays: days, total: list.length });
      expect(Date.parse(body.metadata.since)).toBeGreaterThanOrEqual((now - days * DAY - 5) * 1000);
    }
  });

  it('pages newest first with _start and _limit, both or neither', async () => {
    const a = await audience();
    const ds = tenancy.dataSource.id;
    await member(ds, 'pager', a);
    const all = Array.from({ length: 60 }, (_, i) => ({ id: `p-${String(i).padStart(2, '0')}`, ageDays: i / 10 }));
    await events(ds, 'pager', all);
    const first = await get(a);
    expect(ids(first.body)).toEqual(all.slice(0, 50).map((e) => e.id));
    expect(first.body.metadata).toMatchObject({ start: 0, limit: 50, count: 50, total: 60 });
    const page = await get(a, '?_start=55&_limit=10');
    expect(ids(page.body)).toEqual(all.slice(55).map((e) => e.id));
    expect(page.body.metadata).toMatchObject({ start: 55, limit: 10, count: 5, total: 60 });
    expect(ids((await get(a, '?_start=0&_limit=500')).body)).toHaveLength(60);
    for (const q of ['?_start=0', '?_limit=10', '?_start=0&_limit=0', '?_start=0&_limit=501', '?_start=-1&_limit=5', '?_start=x&_limit=5']) {
      const { status, body } = await get(a, q);
      expect([q, status]).toEqual([q, 400]);
      expect(typeof body.message).toBe('string');
    }
  });
});
