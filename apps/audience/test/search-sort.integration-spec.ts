import { randomUUID } from 'node:crypto';
import type { ClickHouse } from '@meld/clickhouse';
import { type DataMode, type Scope } from '@meld/contracts';
import { AttributeEntity } from '@meld/db';
import { AudienceSnapshotFixture, contactRow, seedTenancy, signedPrincipal, startAppUnderTest, type Json } from '@meld/fixtures';
import { migratedTestClickHouse } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { appDefinition } from '../src/app.definition';
import { AudienceSearchSchema } from '../src/lists/lists.schema';

const LIST: Scope[] = ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_LIST'];

type Values = { score?: number; joined?: number; nickname?: string; active?: boolean; tags?: string[]; email?: string; tier?: string };
type Key = { attribute: 'score' | 'joined' | 'nickname' | 'active'; order?: 'asc' | 'desc' };

/**
 * `sort` on POST /audience/search (ADR 0337), over audience_snapshot states written as the probes
 * sink writes them: superseded states, a deletion, ties and missing values. The expected order is
 * computed here from the contacts' current values; ties fall back to the unsorted search's order.
 */
describe('audience search: sort', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let ch: ClickHouse;
  let tenancy: Awaited<ReturnType<typeof seedTenancy>>;
  /** Each listed contact's current values. */
  const current = new Map<string, Values>();
  /** The ids in the order of an unsorted search (the tie-break). */
  let stable: string[] = [];

  const day = Date.UTC(2026, 0, 1) / 1000;
  const state = (audienceId: string, v: Values, extra: { version?: number; deleted?: 0 | 1 } = {}) =>
    contactRow(tenancy.project.id, audienceId, {
      str: { ...(v.nickname === undefined ? {} : { nickname: v.nickname }), ...(v.tags ? { tags: v.tags } : {}), ...(v.email ? { _email: v.email } : {}), ...(v.tier ? { loyalty_tier: v.tier } : {}) },
      num: { ...(v.score === undefined ? {} : { score: v.score }), ...(v.joined === undefined ? {} : { joined: v.joined }), ...(v.active === undefined ? {} : { active: v.active ? 1 : 0 }) },
      ...extra,
    });

  beforeAll(async () => {
    ch = await migratedTestClickHouse();
    ({ app, base, db } = await startAppUnderTest(appDefinition));
    tenancy = await seedTenancy(db, 'sort');
    await db.getRepository(AttributeEntity).insert([
      { projectId: tenancy.project.id, uid: 'score', label: 'Score', type: 'number' },
      { projectId: tenancy.project.id, uid: 'joined', label: 'Joined', type: 'date' },
      { projectId: tenancy.project.id, uid: 'nickname', label: 'Nickname', type: 'string' },
      { projectId: tenancy.project.id, uid: 'active', label: 'Active', type: 'boolean' },
      { projectId: tenancy.project.id, uid: 'tags', label: 'Tags', type: 'string', multivalue: true },
    ]);
    // `nickname` is read from the key/value arrays, the others from their slot columns: both forms sort.
    await db.query(`UPDATE attributes SET slot = NULL WHERE project_id = $1 AND uid = 'nickname'`, [tenancy.project.id]);
    const values: Values[] = [
      { score: 10, joined: day, nickname: 'émile', active: true, tier: 'gold', email: 'a@example.com' },
      { score: -3.5, joined: day + 86_400, nickname: 'Zoe', active: false, tier: 'gold' },
      { score: 10, nickname: 'zoe', active: true, tier: 'silver' },
      { score: 0, joined: day - 86_400, nickname: 'adam', tier: 'gold' },
      { joined: day, nickname: '', tier: 'gold' },
      { score: 1e9, active: false, tier: 'silver', tags: ['x', 'y'] },
      { score: 10, joined: day, tier: 'gold' },
      {},
      { score: 7, nickname: 'Adam', active: true, tier: 'gold' },
      { score: 7, nickname: 'bob', active: true, tier: 'gold' },
      { score: 42, joined: day + 3 * 86_400, nickname: 'bea', active: false, tier: 'silver' },
    ];
    const snapshot = new AudienceSnapshotFixture(ch, db);
    const states = [];
    for (const v of values) {
      const id = randomUUID();
      current.set(id, v);
      states.push(state(id, v));
      await db.query(`INSERT INTO audience_contacts (project_id, id, attributes, datasources, ds_contact_ids) VALUES ($1, $2, $3, '["web"]', '["w1"]')`, [tenancy.project.id, id, { _user_id: id }]);
    }
    // Superseded: first the top score, then moved to the bottom; and a contact deleted with the highest score of all.
    const [moved, deleted] = [randomUUID(), randomUUID()];
    states.push(state(moved, { score: 5e9, nickname: 'aaa', tier: 'gold' }), state(deleted, { score: 9e9, tier: 'gold' }));
    await snapshot.write(states);
    await snapshot.write([state(moved, { score: -100, nickname: 'zzz', tier: 'gold' }, { version: 2 }), state(deleted, {}, { version: 2, deleted: 1 })]);
    current.set(moved, { score: -100, nickname: 'zzz', tier: 'gold' });
    for (const id of [moved, deleted]) {
      await db.query(`INSERT INTO audience_contacts (project_id, id, attributes, datasources, ds_contact_ids) VALUES ($1, $2, $3, '["web"]', '["w1"]')`, [tenancy.project.id, id, { _user_id: id }]);
    }
    const unsorted = await search({ size: 100 });
    stable = unsorted.body.entity.map((c: Json) => c.id);
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
  });

  async function search(body: unknown, { scopes = LIST, dataMode = 'normal' as DataMode } = {}): Promise<{ status: number; body: Json }> {
    const url = `${base}/v1/project/${tenancy.project.uid}/audience/search`;
    const principal = signedPrincipal(
      { kind: 'product', tokenId: randomUUID(), organizationId: tenancy.organization.id, plan: 'm', scopes, project: { id: tenancy.project.id, uid: tenancy.project.uid, dataMode }, dataSourceId: null },
      { app: 'audience', method: 'POST', url },
    );
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...principal }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  }

  /** The reference order: present before missing, then the value (strings by UTF-8 bytes), then the unsorted order. */
  function expected(keys: readonly Key[], only: (v: Values) => boolean = () => true): string[] {
    const cmp = (a: unknown, b: unknown) => (typeof a === 'string' ? Buffer.compare(Buffer.from(a), Buffer.from(b as string)) : Number(a) - Number(b));
    return stable
      .filter((id) => only(current.get(id)!))
      .sort((x, y) => {
        for (const { attribute, order } of keys) {
          const [a, b] = [current.get(x)![attribute], current.get(y)![attribute]];
          if ((a === undefined) !== (b === undefined)) return a === undefined ? 1 : -1;
          if (a === undefined || a === b) continue;
          return (order === 'desc' ? -1 : 1) * Math.sign(cmp(a, b));
        }
        return stable.indexOf(x) - stable.indexOf(y);
      });
  }

  /** Every contact of a sorted search, read in pages of `size`; each page a 200 of the schema with a right `more`. */
  async function pages(body: object, size: number): Promise<string[]> {
    const seen: string[] = [];
    for (let from = 0; ; from += size) {
      const res = await search({ ...body, from, size });
      expect({ status: res.status, error: res.status === 200 ? undefined : res.body }).toEqual({ status: 200 });
      AudienceSearchSchema.parse(res.body);
      seen.push(...res.body.entity.map((c: Json) => c.id));
      if (!res.body.metadata.more) return seen;
      expect(res.body.entity).toHaveLength(size);
    }
  }

  it('has a stable unsorted order to break ties with, holding the current contacts only', () => {
    expect([...stable].sort()).toEqual([...current.keys()].sort());
  });

  it.each<[string, Key[]]>([
    ['a number, ascending', [{ attribute: 'score' }]],
    ['a number, descending', [{ attribute: 'score', order: 'desc' }]],
    ['a date', [{ attribute: 'joined', order: 'desc' }]],
    ['a string by its bytes (read from the arrays)', [{ attribute: 'nickname' }]],
    ['a boolean', [{ attribute: 'active', order: 'desc' }]],
    ['three keys, each breaking the ties of the one before', [{ attribute: 'active', order: 'desc' }, { attribute: 'score', order: 'desc' }, { attribute: 'nickname' }]],
  ])('orders by %s, missing values last, ties in the unsorted order, in pages that never overlap', async (_, keys) => {
    const want = expected(keys);
    expect(await pages({ sort: keys }, 100)).toEqual(want);
    expect(await pages({ sort: keys }, 3)).toEqual(want);
  });

  it('sorts only what the filter or segment selects, and reads each contact in its current state', async () => {
    const gold = { type: 'attribute_condition', key: 'loyalty_tier', operator: 'matches-string', values: ['gold'] };
    const want = expected([{ attribute: 'score', order: 'desc' }], (v) => v.tier === 'gold');
    expect(await pages({ root: gold, sort: [{ attribute: 'score', order: 'desc' }] }, 4)).toEqual(want);
    // The superseded top score (5e9) and the deleted contact (9e9) are nowhere; the moved contact is last of those with a score.
    expect(want.slice(0, 2).map((id) => current.get(id)!.score)).toEqual([10, 10]);
    const [segment] = await db.query(`INSERT INTO segments (project_id, name, filter) VALUES ($1, 'Gold', $2) RETURNING id`, [tenancy.project.id, { version: '0.0.1', root: gold }]);
    expect(await pages({ segment: segment.id, sort: [{ attribute: 'score', order: 'desc' }] }, 4)).toEqual(want);
  });

  it('refuses unknown and multivalue attributes (400), email and phone without mayReadPii and any sort in a blocked project (403)', async () => {
    for (const [sort, path, message] of [
      [[{ attribute: 'nope' }], 'sort[0].attribute', /unknown attribute "nope"/],
      [[{ attribute: 'score' }, { attribute: 'tags' }], 'sort[1].attribute', /multivalue/],
      [[{ attribute: 'constructor' }], 'sort[0].attribute', /unknown attribute "constructor"/],
    ] as const) {
      const res = await search({ sort });
      expect([res.status, res.body.details.fields[0].path, res.body.message]).toEqual([400, path, expect.stringMatching(message)]);
    }
    for (const body of [{ sort: [] }, { sort: [{ attribute: 'score', order: 'up' }] }, { sort: [{ attribute: 'score', nulls: 'first' }] }, { sort: Array(4).fill({ attribute: 'score' }) }]) {
      const res = await search(body);
      expect([res.status, res.body.details.fields[0].path]).toEqual([400, expect.stringMatching(/^sort/)]);
    }
    const pii = await search({ sort: [{ attribute: '_email' }] });
    expect([pii.status, pii.body.details.path]).toEqual([403, 'sort[0].attribute']);
    const basic = await search({ sort: [{ attribute: '_email' }] }, { scopes: [...LIST, 'PROJECT_AUDIENCE_DATA_BASIC'] });
    expect(basic.status).toBe(200);
    const blocked = await search({ sort: [{ attribute: 'score' }] }, { scopes: [...LIST, 'PROJECT_AUDIENCE_DATA_FULL'], dataMode: 'blocked' });
    expect(blocked.status).toBe(403);
    // A scroll lists in its own order: `sort` is not one of its fields.
    const url = `${base}/v1/project/${tenancy.project.uid}/audience/scroll`;
    const principal = signedPrincipal(
      { kind: 'product', tokenId: randomUUID(), organizationId: tenancy.organization.id, plan: 'm', scopes: LIST, project: { id: tenancy.project.id, uid: tenancy.project.uid, dataMode: 'normal' }, dataSourceId: null },
      { app: 'audience', method: 'POST', url },
    );
    const scroll = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...principal }, body: JSON.stringify({ sort: [{ attribute: 'score' }] }) });
    expect(scroll.status).toBe(400);
  });
});
