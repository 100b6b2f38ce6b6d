import { randomUUID } from 'node:crypto';
import type { ClickHouse } from '@meld/clickhouse';
import { type DataMode, type Scope } from '@meld/contracts';
import { AudienceSnapshotFixture, contactRow, seedTenancy, signedPrincipal, startAppUnderTest, type Json } from '@meld/fixtures';
import { migratedTestClickHouse } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { appDefinition } from '../src/app.definition';
import { AudienceScrollSchema, AudienceSearchSchema } from '../src/lists/lists.schema';

/**
 * POST /audience/scroll and /audience/search on the audience app (ADR 0330): contacts in Postgres
 * as identity-merge writes them, their states in audience_snapshot as the probes sink writes them.
 */
describe('audience lists: scroll and search', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let ch: ClickHouse;
  let tenancy: Awaited<ReturnType<typeof seedTenancy>>;
  const gold: string[] = [];
  const silver: string[] = [];
  let customId: string;

  const LIST: Scope[] = ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_LIST'];

  beforeAll(async () => {
    ch = await migratedTestClickHouse();
    ({ app, base, db } = await startAppUnderTest(appDefinition));
    tenancy = await seedTenancy(db, 'lists');
    const snapshot = new AudienceSnapshotFixture(ch, db);
    const states = [];
    for (let i = 0; i < 23; i++) {
      const id = randomUUID();
      const tier = i % 3 === 0 ? 'silver' : 'gold';
      (tier === 'gold' ? gold : silver).push(id);
      const attributes: Record<string, unknown> = { _user_id: `u${i}`, _first_name: `Ada ${i}`, _email: `ada${i}@example.com`, _phone_mobile: `+4474001234${String(i).padStart(2, '0')}`, loyalty_tier: tier, vip: i % 2 === 0 };
      if (i === 1) {
        attributes.id = 'not-the-audience-id';
        customId = id;
      }
      await db.query(`INSERT INTO audience_contacts (project_id, id, attributes, datasources, ds_contact_ids) VALUES ($1, $2, $3, '["web"]', '["w1"]')`, [tenancy.project.id, id, attributes]);
      states.push(state(id, { loyalty_tier: tier, _email: `ada${i}@example.com` }));
    }
    // Deleted: its newest state is a deletion. Gone from Postgres but not yet from the snapshot: left out of pages.
    const [deleted, vanished] = [randomUUID(), randomUUID()];
    states.push(state(deleted, { loyalty_tier: 'gold' }), state(vanished, { loyalty_tier: 'gold' }));
    await snapshot.write(states);
    // A newer state in another insert (another part): a contact that moved from gold to silver is listed as silver only.
    const moved = gold.pop()!;
    silver.push(moved);
    await snapshot.write([{ ...state(moved, { loyalty_tier: 'silver' }), version: '2' }, { ...state(deleted, {}), version: '2', deleted: 1 }]);
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
  });

  const state = (audienceId: string, str: Record<string, string>) => contactRow(tenancy.project.id, audienceId, { str });

  const call = async (path: 'scroll' | 'search', body: unknown, { scopes = LIST, dataMode = 'normal' as DataMode } = {}): Promise<{ status: number; body: Json }> => {
    const url = `${base}/v1/project/${tenancy.project.uid}/audience/${path}`;
    const principal = signedPrincipal(
      { kind: 'product', tokenId: randomUUID(), organizationId: tenancy.organization.id, plan: 'm', scopes, project: { id: tenancy.project.id, uid: tenancy.project.uid, dataMode }, dataSourceId: null },
      { app: 'audience', method: 'POST', url },
    );
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...principal }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };
  /** Another route of the project with PROJECT_AUDIENCE_READ alone. */
  const readOnly = async (method: 'GET' | 'POST', route: string, body?: unknown): Promise<{ status: number; body: Json }> => {
    const url = `${base}/v1/project/${tenancy.project.uid}${route}`;
    const principal = signedPrincipal(
      { kind: 'product', tokenId: randomUUID(), organizationId: tenancy.organization.id, plan: 'm', scopes: ['PROJECT_AUDIENCE_READ'], project: { id: tenancy.project.id, uid: tenancy.project.uid, dataMode: 'normal' }, dataSourceId: null },
      { app: 'audience', method, url },
    );
    const res = await fetch(url, { method, headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...principal }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: res.status, body: await res.json() };
  };
  const GOLD = { type: 'attribute_condition', key: 'loyalty_tier', operator: 'matches-string', values: ['gold'] };

  /** Every page of a scroll of `size` over `body`'s filter: the ids listed and the pages read (each page a 200 of the schema). */
  async function scrollThrough(body: object, size: number): Promise<{ seen: string[]; pages: number }> {
    const seen: string[] = [];
    let pages = 0;
    for (let next: string | null | undefined; next !== null && pages < 30; pages++) {
      const res = await call('scroll', { ...body, size, ...(next ? { scrollId: next } : {}) });
      expect({ status: res.status, error: res.status === 200 ? undefined : res.body }).toEqual({ status: 200 });
      AudienceScrollSchema.parse(res.body);
      expect(res.body.metadata.count).toBe(res.body.entity.length);
      seen.push(...res.body.entity.map((c: { id: string }) => c.id));
      next = res.body.metadata.scrollId;
    }
    return { seen, pages };
  }

  it('scrolls every contact matching the filter exactly once, page after page, until scrollId is null', async () => {
    const { seen, pages } = await scrollThrough({ root: GOLD }, 4);
    expect(seen.length).toBe(new Set(seen).size);
    expect([...seen].sort()).toEqual([...gold].sort());
    // 14 gold contacts and a vanished one in the snapshot, 4 a page: 4 pages, the last one short and saying so.
    expect(pages).toBe(4);
    // Pages of one: hash windows much narrower than the audience, widened where they hold too few.
    expect((await scrollThrough({ root: GOLD }, 1)).seen.sort()).toEqual([...gold].sort());
    // Pages of 10 of 15 rows: the first window spans the whole hash space, and its width (2^64) goes into the scroll id.
    expect((await scrollThrough({ root: GOLD }, 10)).seen.sort()).toEqual([...gold].sort());
    const exact = await call('scroll', { root: GOLD, size: 15 });
    expect([exact.body.metadata.count, exact.body.metadata.scrollId]).toEqual([14, null]);
    const all = await call('scroll', { size: 1000 });
    expect(all.body.entity.map((c: { id: string }) => c.id).sort()).toEqual([...gold, ...silver].sort());
    expect(all.body.metadata.scrollId).toBeNull();
  });

  it('shows each contact at the caller\'s data level and data mode, its audience id never replaced by a custom `id`', async () => {
    const byId = (body: Json) => new Map<string, Json>(body.entity.map((c: Json) => [c.id, c]));
    const base = byId((await call('scroll', { size: 1000 })).body);
    expect(Object.keys(base.get(gold[0])!).sort()).toEqual(['_first_name', '_user_id', 'id']);
    expect(base.get(customId)!.id).toBe(customId);
    const basic = byId((await call('scroll', { size: 1000 }, { scopes: [...LIST, 'PROJECT_AUDIENCE_DATA_BASIC'] })).body).get(gold[0])!;
    expect(basic).toMatchObject({ _email: expect.stringMatching(/^ada\d+@example\.com$/), _phone_mobile: expect.stringMatching(/^\+44/), vip: expect.any(Boolean) });
    expect(basic.loyalty_tier).toBeUndefined();
    const full = byId((await call('scroll', { size: 1000 }, { scopes: [...LIST, 'PROJECT_AUDIENCE_DATA_FULL'] })).body);
    expect(full.get(customId)).toMatchObject({ id: customId, loyalty_tier: 'gold', _datasources: ['web'], _ds_contact_ids: ['w1'] });
    const masked = byId((await call('scroll', { size: 1000 }, { scopes: [...LIST, 'PROJECT_AUDIENCE_DATA_FULL'], dataMode: 'anonymized' })).body).get(gold[0])!;
    expect(masked._email).not.toMatch(/^ada\d+@example\.com$/);
    const blocked = (await call('search', { size: 100 }, { scopes: [...LIST, 'PROJECT_AUDIENCE_DATA_FULL'], dataMode: 'blocked' })).body.entity;
    expect(blocked.every((c: Json) => Object.keys(c).join() === 'id')).toBe(true);
  });

  it('refuses a scrollId issued for another filter or not issued at all, and accepts the same filter re-serialised', async () => {
    const first = await call('scroll', { root: GOLD, size: 2 });
    const { scrollId } = first.body.metadata;
    const reordered = await call('scroll', { version: '0.0.1', root: { values: ['gold'], operator: 'matches-string', key: 'loyalty_tier', type: 'attribute_condition' }, size: 2, scrollId });
    expect(reordered.status).toBe(200);
    expect(reordered.body.entity.map((c: Json) => c.id)).not.toContain(first.body.entity[0].id);
    // A forged window width is only a hint: clamped, the scroll still lists what follows.
    const state = JSON.parse(Buffer.from(scrollId, 'base64url').toString());
    const tiny = await call('scroll', { root: GOLD, size: 2, scrollId: Buffer.from(JSON.stringify({ ...state, s: '1' })).toString('base64url') });
    expect(tiny.body.entity.map((c: Json) => c.id)).toEqual(reordered.body.entity.map((c: Json) => c.id));
    for (const [body, why] of [
      [{ size: 2, scrollId }, 'another project or filter'],
      [{ root: GOLD, scrollId: 'bm9wZQ' }, 'not a scroll id'],
      [{ root: GOLD, scrollId: Buffer.from(JSON.stringify({ v: 1, f: 'x', h: '1 OR 1', i: randomUUID() })).toString('base64url') }, 'not a scroll id'],
    ] as const) {
      const res = await call('scroll', body);
      expect([res.status, res.body.details.fields[0].path, res.body.message]).toEqual([400, 'scrollId', expect.stringContaining(why)]);
    }
  });

  it('searches one page at an offset, in the scroll\'s order, saying whether more follow (no total: probe rule 1); offsets stop at 10,000', async () => {
    const scrolled = (await call('scroll', { root: GOLD, size: 1000 })).body.entity.map((c: Json) => c.id);
    const page = await call('search', { root: GOLD, from: 5, size: 5 });
    expect(page.status).toBe(200);
    AudienceSearchSchema.parse(page.body);
    // 15 gold rows in the snapshot, rows 6-10 here; the vanished one, wherever it falls, has no contact to show.
    const ids: string[] = page.body.entity.map((c: Json) => c.id);
    expect(page.body.metadata).toEqual({ from: 5, size: 5, count: ids.length, more: true });
    expect(ids.length).toBeGreaterThanOrEqual(4);
    expect(ids).toEqual(scrolled.filter((id: string) => ids.includes(id)));
    expect(scrolled.indexOf(ids[0])).toBeGreaterThanOrEqual(4);
    const tail = await call('search', { root: GOLD, from: 10, size: 5 });
    expect(tail.body.metadata).toMatchObject({ from: 10, more: false });
    expect(tail.body.metadata.count).toBeGreaterThanOrEqual(3);
    const whole = (await call('search', {})).body.metadata;
    expect(whole).toMatchObject({ from: 0, size: 20, more: true });
    expect(whole.count).toBeGreaterThanOrEqual(19);
    const empty = await call('search', { root: { type: 'attribute_condition', key: 'loyalty_tier', operator: 'matches-string', values: ['platinum'] } });
    expect([empty.status, empty.body.entity, empty.body.metadata.more]).toEqual([200, [], false]);
    const far = await call('search', { from: 9_950, size: 100 });
    expect([far.status, far.body.details.fields[0].path]).toEqual([400, 'from']);
    const big = await call('search', { size: 101 });
    expect([big.status, big.body.details.fields[0].path]).toEqual([400, 'size']);
    const huge = await call('scroll', { size: 1001 });
    expect([huge.status, huge.body.details.fields[0].path]).toEqual([400, 'size']);
  });

  it('lists a saved segment\'s contacts in place of a root; an unknown segment is 404, a segment with a root 400', async () => {
    const [saved] = await db.query(`INSERT INTO segments (project_id, name, filter) VALUES ($1, 'Gold', $2) RETURNING id`, [tenancy.project.id, { version: '0.0.1', root: GOLD }]);
    expect((await scrollThrough({ segment: saved.id }, 5)).seen.sort()).toEqual([...gold].sort());
    // The same page as the segment's filter written out: 3 rows, of which the vanished contact, when it sorts there, is not shown.
    const page = await call('search', { segment: saved.id, size: 3 });
    expect(page.body).toEqual((await call('search', { root: GOLD, size: 3 })).body);
    expect(page.body.metadata.more).toBe(true);
    expect((await call('search', { segment: randomUUID() })).status).toBe(404);
    const both = await call('search', { segment: saved.id, root: GOLD });
    expect([both.status, both.body.details.fields[0].path]).toEqual([400, 'segment']);
    // A scroll id of the segment does not continue a scroll of its filter written out.
    const first = await call('scroll', { segment: saved.id, size: 2 });
    expect((await call('scroll', { root: GOLD, size: 2, scrollId: first.body.metadata.scrollId })).status).toBe(400);
    // It names the segment's filter as it was: a new name goes on with the scroll; a filter changed since is another filter, not the middle of this one.
    await db.query(`UPDATE segments SET name = 'Gold members' WHERE id = $1`, [saved.id]);
    expect((await call('scroll', { segment: saved.id, size: 2, scrollId: first.body.metadata.scrollId })).status).toBe(200);
    await db.query(`UPDATE segments SET filter = $2 WHERE id = $1`, [saved.id, { version: '0.0.1', root: { ...GOLD, values: ['silver'] } }]);
    const changed = await call('scroll', { segment: saved.id, size: 2, scrollId: first.body.metadata.scrollId });
    expect([changed.status, changed.body.details?.fields[0].path]).toEqual([400, 'scrollId']);
  });

  it('refuses a bad filter node (400 naming it) and an email condition without dataPolicy.mayReadPii (403)', async () => {
    const bad = await call('search', { root: { type: 'group', operator: 'and', children: [{ type: 'attribute_condition', key: 'nope', operator: 'is-set', values: [] }] } });
    expect([bad.status, bad.body.details.path]).toEqual([400, 'root.children[0].key']);
    const pii = { type: 'attribute_condition', key: '_email', operator: 'matches-string', values: ['ada2@example.com'] };
    for (const path of ['scroll', 'search'] as const) {
      const refused = await call(path, { root: pii });
      expect([refused.status, refused.body.details.path]).toEqual([403, 'root.key']);
    }
    const allowed = await call('search', { root: pii }, { scopes: [...LIST, 'PROJECT_AUDIENCE_DATA_BASIC'] });
    expect(allowed.body.entity.map((c: Json) => c._email)).toEqual(['ada2@example.com']);
  });

  it('refuses a filter on events without PROJECT_AUDIENCE_DATA_EVENTS, naming the node; the count of the same filter needs no more than READ (ADR 0344)', async () => {
    // Two gold contacts bought sku-1, through their web source contacts.
    const buyers = gold.slice(0, 2);
    const at = Math.floor(Date.now() / 1000) - 86_400;
    await ch.insert('audience_membership', buyers.map((audienceId, i) => ({ project_id: tenancy.project.id, data_source_id: tenancy.dataSource.id, user_id: `buyer-${i}`, audience_id: audienceId, version: '1', deleted: 0 })));
    await ch.insert(
      'events',
      buyers.map((_, i) => ({ project_id: tenancy.project.id, data_source_id: tenancy.dataSource.id, user_id: `buyer-${i}`, event_id: `buy-${i}-${randomUUID()}`, event_type: 'purchase', event_date: at, received_at: at + 1, param_keys: ['product-id'], param_values: [JSON.stringify('sku-1')] })),
    );
    const bought = { type: 'event_condition', key: 'purchase.product-id', operator: 'contains-string', values: ['sku-1'] };
    const root = { type: 'group', children: [bought] };
    for (const path of ['scroll', 'search'] as const) {
      const refused = await call(path, { root });
      expect([path, refused.status, refused.body.details?.path, refused.body.details?.missingScopes]).toEqual([path, 403, 'root.children[0].key', ['PROJECT_AUDIENCE_DATA_EVENTS']]);
      expect(refused.body.message).toMatch(/^root\.children\[0\]\.key: .*PROJECT_AUDIENCE_DATA_EVENTS/);
    }
    // At any depth: a group_event (negated too) is named by its eventType.
    const nested = await call('search', { root: { type: 'group', children: [GOLD, { type: 'group', operator: 'or', children: [GOLD, { type: 'group_event', eventType: 'purchase', negate: true, children: [] }] }] } });
    expect([nested.status, nested.body.details?.path]).toEqual([403, 'root.children[1].children[1].eventType']);
    // A saved segment on events is no way around it.
    const [saved] = await db.query(`INSERT INTO segments (project_id, name, filter) VALUES ($1, 'Buyers', $2) RETURNING id`, [tenancy.project.id, { version: '0.0.1', root }]);
    const bySegment = await call('scroll', { segment: saved.id });
    expect([bySegment.status, bySegment.body.details?.path]).toEqual([403, 'filter.root.children[0].key']);

    const EVENTS: Scope[] = [...LIST, 'PROJECT_AUDIENCE_DATA_EVENTS'];
    const listed = await call('search', { root }, { scopes: EVENTS });
    expect([listed.status, listed.body.entity?.map((c: Json) => c.id).sort()]).toEqual([200, [...buyers].sort()]);
    expect((await call('scroll', { segment: saved.id }, { scopes: EVENTS })).body.entity.map((c: Json) => c.id).sort()).toEqual([...buyers].sort());

    // A size is not contact data (ADR 0053): the count and the segment's count answer with READ alone.
    const count = await readOnly('POST', '/audience/count', { root });
    expect([count.status, count.body.metadata]).toEqual([200, { totalHits: 2 }]);
    const segmentCount = await readOnly('GET', `/segment/${saved.id}/count`);
    expect([segmentCount.status, segmentCount.body.metadata]).toEqual([200, { totalHits: 2 }]);
  });
});
