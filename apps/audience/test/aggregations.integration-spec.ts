import { randomUUID } from 'node:crypto';
import { serializeContact } from '@meld/auth';
import type { ClickHouse } from '@meld/clickhouse';
import { type DataMode, type Scope } from '@meld/contracts';
import { AttributeEntity } from '@meld/db';
import { AudienceSnapshotFixture, contactRow, seedTenancy, signedPrincipal, startAppUnderTest, type Json } from '@meld/fixtures';
import { CLICKHOUSE_READER } from '@meld/platform';
import { migratedTestClickHouse } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { appDefinition } from '../src/app.definition';
import { AudienceAggregationsSchema } from '../src/aggregations/aggregations.schema';

const SCOPES: Scope[] = ['PROJECT_AUDIENCE_READ', 'PROJECT_AGGREGATIONS'];

/**
 * POST /audience/aggregations on the audience app (ADR 0333), over audience_snapshot states written
 * as the probes sink writes them, stale versions and a deletion included.
 */
describe('audience aggregations', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let ch: ClickHouse;
  let tenancy: Awaited<ReturnType<typeof seedTenancy>>;

  type State = { tier?: string; score?: number; tags?: string[]; email?: string; joined?: number; version?: number; deleted?: 0 | 1 };
  const state = (audienceId: string, s: State) =>
    contactRow(tenancy.project.id, audienceId, {
      str: { ...(s.tier ? { loyalty_tier: s.tier } : {}), ...(s.tags ? { tags: s.tags } : {}), ...(s.email ? { _email: s.email } : {}) },
      num: { ...(s.score === undefined ? {} : { score: s.score }), ...(s.joined === undefined ? {} : { joined: s.joined }) },
      version: s.version,
      deleted: s.deleted,
    });

  beforeAll(async () => {
    ch = await migratedTestClickHouse();
    ({ app, base, db } = await startAppUnderTest(appDefinition));
    tenancy = await seedTenancy(db, 'aggs');
    await db.getRepository(AttributeEntity).insert([
      { projectId: tenancy.project.id, uid: 'score', label: 'Score', type: 'number' },
      { projectId: tenancy.project.id, uid: 'tags', label: 'Tags', type: 'string', multivalue: true },
      { projectId: tenancy.project.id, uid: 'joined', label: 'Joined', type: 'date' },
    ]);
    const snapshot = new AudienceSnapshotFixture(ch, db);
    const [moved, deleted] = [randomUUID(), randomUUID()];
    const day = Date.UTC(2026, 0, 1) / 1000;
    await snapshot.write([
      state(randomUUID(), { tier: 'gold', score: 10, tags: ['a', 'a', 'b'], email: 'ada@example.com', joined: day }),
      state(randomUUID(), { tier: 'gold', score: 30, tags: ['a'], email: 'bob@example.com', joined: day + 86_400 }),
      state(randomUUID(), { tier: 'silver', score: 20, tags: ['c'] }),
      state(randomUUID(), { tier: 'gold' }),
      state(randomUUID(), {}),
      state(moved, { tier: 'gold', score: 1000, version: 1 }),
      state(deleted, { tier: 'gold', score: 5000, version: 1 }),
    ]);
    // Newer states in another part: `moved` is now silver with score 40, `deleted` is gone.
    await snapshot.write([state(moved, { tier: 'silver', score: 40, version: 2 }), state(deleted, { version: 2, deleted: 1 })]);
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
  });

  const aggregate = async (body: unknown, { scopes = SCOPES, dataMode = 'normal' as DataMode, tenant = tenancy } = {}): Promise<{ status: number; body: Json }> => {
    const url = `${base}/v1/project/${tenant.project.uid}/audience/aggregations`;
    const principal = signedPrincipal(
      { kind: 'product', tokenId: randomUUID(), organizationId: tenant.organization.id, plan: 'm', scopes, project: { id: tenant.project.id, uid: tenant.project.uid, dataMode }, dataSourceId: null },
      { app: 'audience', method: 'POST', url },
    );
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...principal }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };
  const ok = async (body: unknown) => {
    const res = await aggregate(body);
    expect(res.status).toBe(200);
    return AudienceAggregationsSchema.parse(res.body).metadata;
  };

  it('counts each value exactly over the current contacts, superseded and deleted states excluded', async () => {
    const out = await ok({ aggregations: [{ type: 'terms', attribute: 'loyalty_tier' }, { type: 'terms', attribute: 'tags', name: 'labels', size: 1 }] });
    expect(out.matching).toBe(6);
    expect(out.aggregations).toEqual([
      { name: 'terms_loyalty_tier', type: 'terms', attribute: 'loyalty_tier', withValue: 5, missing: 1, buckets: [{ value: 'gold', count: 3 }, { value: 'silver', count: 2 }] },
      // A contact whose tags repeat a value counts once for it.
      { name: 'labels', type: 'terms', attribute: 'tags', withValue: 3, missing: 3, buckets: [{ value: 'a', count: 2 }] },
    ]);
  });

  it('aggregates the contacts matching a root, with number values typed and stats of numbers and dates', async () => {
    const gold = { type: 'attribute_condition', key: 'loyalty_tier', operator: 'matches-string', values: ['gold'] };
    const out = await ok({ root: gold, aggregations: [{ type: 'stats', attribute: 'score' }, { type: 'terms', attribute: 'score' }, { type: 'stats', attribute: 'joined' }] });
    expect(out.matching).toBe(3);
    expect(out.aggregations).toEqual([
      { name: 'stats_score', type: 'stats', attribute: 'score', count: 2, min: 10, max: 30, avg: 20, sum: 40 },
      { name: 'terms_score', type: 'terms', attribute: 'score', withValue: 2, missing: 1, buckets: [{ value: 10, count: 1 }, { value: 30, count: 1 }] },
      { name: 'stats_joined', type: 'stats', attribute: 'joined', count: 2, min: '2026-01-01T00:00:00.000Z', max: '2026-01-02T00:00:00.000Z', avg: null, sum: null },
    ]);
    const all = await ok({ aggregations: [{ type: 'stats', attribute: 'score' }] });
    expect(all.aggregations[0]).toMatchObject({ count: 4, min: 10, max: 40, sum: 100 });
    const nobody = await ok({ root: { ...gold, values: ['platinum'] }, aggregations: [{ type: 'stats', attribute: 'score' }, { type: 'terms', attribute: 'tags' }] });
    expect(nobody).toEqual({ matching: 0, aggregations: [{ name: 'stats_score', type: 'stats', attribute: 'score', count: 0, min: null, max: null, avg: null, sum: null }, { name: 'terms_tags', type: 'terms', attribute: 'tags', withValue: 0, missing: 0, buckets: [] }] });

    // A saved segment in place of the root (ADR 0333): the same contacts.
    const [saved] = await db.query(`INSERT INTO segments (project_id, name, filter) VALUES ($1, 'Gold', $2) RETURNING id`, [tenancy.project.id, { version: '0.0.1', root: gold }]);
    expect(await ok({ segment: saved.id, aggregations: [{ type: 'stats', attribute: 'score' }, { type: 'terms', attribute: 'score' }, { type: 'stats', attribute: 'joined' }] })).toEqual(out);
    expect((await aggregate({ segment: randomUUID(), aggregations: [{ type: 'stats', attribute: 'score' }] })).status).toBe(404);
  });

  it('refuses unknown attributes, stats of a string, terms of a date, a name used twice, and empty requests (400 naming the field)', async () => {
    const cases: Array<[unknown, string]> = [
      [{ aggregations: [{ type: 'terms', attribute: 'nope' }] }, 'aggregations[0].attribute'],
      [{ aggregations: [{ type: 'terms', attribute: 'tags' }, { type: 'stats', attribute: 'loyalty_tier' }] }, 'aggregations[1].attribute'],
      [{ aggregations: [{ type: 'terms', attribute: 'joined' }] }, 'aggregations[0].attribute'],
      [{ aggregations: [{ type: 'terms', attribute: 'tags' }, { type: 'terms', attribute: 'tags' }] }, 'aggregations[1].name'],
      [{ aggregations: [] }, 'aggregations'],
      [{ aggregations: [{ type: 'histogram', attribute: 'score' }] }, 'aggregations[0].type'],
    ];
    for (const [body, path] of cases) {
      const res = await aggregate(body);
      expect([path, res.status, res.body.details?.fields?.[0]?.path]).toEqual([path, 400, path]);
    }
  });

  it('refuses a root whose terms or stats read would pass what ClickHouse parses: 400 at root, before any read (ADR 0058)', async () => {
    // Within every limit of the grammar, its counts' query 43-51 bytes under 240 KiB; each terms or
    // stats query holds the same root beside more (61 to 625 bytes), so passes it.
    const contains = (i: number) => ({ type: 'attribute_condition', key: 'loyalty_tier', operator: 'contains-string', values: [`${'\\'.repeat(2040)}${i}`, 'x'] });
    const numbers = Array.from({ length: 1777 }, (_, j) => -1.2345678901234567e-300 * (j + 1));
    const equals = (k: number) => ({ type: 'attribute_condition', key: 'score', operator: 'equals-number', values: numbers.slice(k * 500, k * 500 + 500) });
    const root = { type: 'group', operator: 'or', children: [...Array.from({ length: 24 }, (_, i) => contains(i)), ...Array.from({ length: 4 }, (_, k) => equals(k))] };
    const reads = jest.spyOn(app.get<ClickHouse>(CLICKHOUSE_READER), 'query');
    try {
      for (const aggregations of [[{ type: 'terms', attribute: 'loyalty_tier' }], [{ type: 'terms', attribute: 'tags' }], [{ type: 'stats', attribute: 'score' }]]) {
        const res = await aggregate({ root, aggregations });
        expect([aggregations[0].attribute, res.status, res.body.details]).toEqual([aggregations[0].attribute, 400, { path: 'root' }]);
        expect(res.body.message).toMatch(/^invalid filter: root: the filter is too large/);
      }
      expect(reads).not.toHaveBeenCalled();
    } finally {
      reads.mockRestore();
    }
  });

  it('needs mayReadPii for email attributes and refuses a blocked project (403)', async () => {
    const emails = { aggregations: [{ type: 'terms', attribute: '_email' }] };
    const refused = await aggregate(emails);
    expect([refused.status, refused.body.details?.path]).toEqual([403, 'aggregations[0].attribute']);
    const allowed = await aggregate(emails, { scopes: [...SCOPES, 'PROJECT_AUDIENCE_DATA_BASIC'] });
    expect(allowed.body.metadata.aggregations[0].buckets.map((b: { value: string }) => b.value)).toEqual(['ada@example.com', 'bob@example.com']);
    expect((await aggregate({ aggregations: [{ type: 'terms', attribute: 'loyalty_tier' }] }, { dataMode: 'blocked' })).status).toBe(403);
  });

  it('refuses a filter on events without PROJECT_AUDIENCE_DATA_EVENTS, naming the node (ADR 0344)', async () => {
    const bought = { type: 'event_condition', key: 'purchase.product-id', operator: 'contains-string', values: ['sku'] };
    const asked = { aggregations: [{ type: 'terms', attribute: 'loyalty_tier' }] };
    const refused = await aggregate({ ...asked, root: { type: 'group', children: [bought] } });
    expect([refused.status, refused.body.details?.path, refused.body.details?.missingScopes]).toEqual([403, 'root.children[0].key', ['PROJECT_AUDIENCE_DATA_EVENTS']]);
    expect(refused.body.message).toContain('PROJECT_AUDIENCE_DATA_EVENTS');
    const inGroup = await aggregate({ ...asked, root: { type: 'group', children: [{ type: 'attribute_condition', key: 'loyalty_tier', operator: 'is-set', values: [] }, { type: 'group_event', eventType: 'purchase', negate: true, children: [bought] }] } });
    expect([inGroup.status, inGroup.body.details?.path]).toEqual([403, 'root.children[1].eventType']);
    const [saved] = await db.query(`INSERT INTO segments (project_id, name, filter) VALUES ($1, 'Buyers', $2) RETURNING id`, [tenancy.project.id, { version: '0.0.1', root: bought }]);
    const bySegment = await aggregate({ ...asked, segment: saved.id });
    expect([bySegment.status, bySegment.body.details?.path]).toEqual([403, 'filter.root.key']);
    // With the scope: nobody bought anything here.
    const allowed = await aggregate({ ...asked, root: bought }, { scopes: [...SCOPES, 'PROJECT_AUDIENCE_DATA_EVENTS'] });
    expect([allowed.status, allowed.body.metadata?.matching]).toEqual([200, 0]);
  });

  describe('values derived from contacts, through the caller\'s mask (ADR 0121)', () => {
    let masking: Awaited<ReturnType<typeof seedTenancy>>;
    const phone = '+33612345678';

    beforeAll(async () => {
      masking = await seedTenancy(db, 'aggmask');
      await db.getRepository(AttributeEntity).insert({ projectId: masking.project.id, uid: 'work_email', label: 'Work email', type: 'string' });
      const ds = masking.dataSource.id;
      const contact = (str: Record<string, string | string[]>) => contactRow(masking.project.id, randomUUID(), { str });
      // Auto-created contacts are keyed by their phone (ADR 0184); two numbers that mask alike; a user id that is an email.
      await new AudienceSnapshotFixture(ch, db).write([
        contact({ _user_id: phone, _ds_contact_ids: [`${ds}/${phone}`], work_email: 'ada@example.com', loyalty_tier: 'gold' }),
        contact({ _user_id: '+33699999978', work_email: 'alan@example.com', loyalty_tier: 'gold' }),
        contact({ _user_id: 'ada@example.com', _ds_contact_ids: [`${ds}/ada@example.com`], work_email: 'bob@example.org', loyalty_tier: 'silver' }),
        contact({ _user_id: 'u-42' }),
      ]);
    });

    const FULL: Scope[] = [...SCOPES, 'PROJECT_AUDIENCE_DATA_FULL'];
    const asked = { aggregations: [{ type: 'terms', attribute: '_user_id' }, { type: 'terms', attribute: 'work_email' }, { type: 'terms', attribute: '_ds_contact_ids' }, { type: 'terms', attribute: 'loyalty_tier' }] };
    const buckets = async (options: { scopes: Scope[]; dataMode: DataMode }) => {
      const res = await aggregate(asked, { ...options, tenant: masking });
      expect(res.status).toBe(200);
      return AudienceAggregationsSchema.parse(res.body).metadata.aggregations.map((a) => (a.type === 'terms' ? a.buckets : []));
    };

    it('shows terms in clear in normal mode at the Basic or Full level', async () => {
      const ds = masking.dataSource.id;
      const clear = await buckets({ scopes: FULL, dataMode: 'normal' });
      expect(clear[0]).toEqual([phone, '+33699999978', 'ada@example.com', 'u-42'].map((value) => ({ value, count: 1 })));
      expect(clear[1]).toEqual(['ada@example.com', 'alan@example.com', 'bob@example.org'].map((value) => ({ value, count: 1 })));
      expect(clear[2]).toEqual([`${ds}/${phone}`, `${ds}/ada@example.com`].sort().map((value) => ({ value, count: 1 })));
      expect(await buckets({ scopes: [...SCOPES, 'PROJECT_AUDIENCE_DATA_BASIC'], dataMode: 'normal' })).toEqual(clear);
    });

    it('masks them as the contact read does in anonymized mode, and below Basic in normal mode, values that mask alike counted together', async () => {
      const anonymized = await buckets({ scopes: FULL, dataMode: 'anonymized' });
      // The two numbers ending in 78 are one bucket of 2, most frequent first again.
      expect(anonymized[0]).toEqual([
        { value: '+33******78', count: 2 },
        { value: 'a***@e***.com', count: 1 },
        { value: 'u-42', count: 1 },
      ]);
      expect(anonymized[1]).toEqual([
        { value: 'a***@e***.com', count: 2 },
        { value: 'b***@e***.org', count: 1 },
      ]);
      // _ds_contact_ids as a Full contact read shows them in anonymized mode.
      const caller = { kind: 'product' as const, scopes: FULL, project: { id: masking.project.id, uid: masking.project.uid, dataMode: 'anonymized' as const } };
      const shown = [phone, 'ada@example.com'].flatMap((u) => serializeContact({ id: 'x', _ds_contact_ids: [`${masking.dataSource.id}/${u}`] }, caller)._ds_contact_ids as string[]);
      expect(anonymized[2].map((b) => b.value).sort()).toEqual(shown.sort());
      expect(JSON.stringify(anonymized)).not.toMatch(/612345678|699999978|ada@|alan@|bob@/);
      // Values holding no email or phone are as stored.
      expect(anonymized[3]).toEqual([{ value: 'gold', count: 2 }, { value: 'silver', count: 1 }]);
      // The mask decides, not the mode alone: below Basic in normal mode, and Basic in anonymized mode, read the same.
      expect(await buckets({ scopes: SCOPES, dataMode: 'normal' })).toEqual(anonymized);
      expect(await buckets({ scopes: [...SCOPES, 'PROJECT_AUDIENCE_DATA_BASIC'], dataMode: 'anonymized' })).toEqual(anonymized);
    });
  });
});
