import { randomUUID } from 'node:crypto';
import type { ClickHouse } from '@meld/clickhouse';
import { type DataMode, type Scope } from '@meld/contracts';
import { AttributeEntity } from '@meld/db';
import { AudienceSnapshotFixture, contactRow, seedTenancy, signedPrincipal, startAppUnderTest, type Json } from '@meld/fixtures';
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

  const aggregate = async (body: unknown, { scopes = SCOPES, dataMode = 'normal' as DataMode } = {}): Promise<{ status: number; body: Json }> => {
    const url = `${base}/v1/project/${tenancy.project.uid}/audience/aggregations`;
    const principal = signedPrincipal(
      { kind: 'product', tokenId: randomUUID(), organizationId: tenancy.organization.id, plan: 'm', scopes, project: { id: tenancy.project.id, uid: tenancy.project.uid, dataMode }, dataSourceId: null },
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

  it('needs mayReadPii for email attributes and refuses a blocked project (403)', async () => {
    const emails = { aggregations: [{ type: 'terms', attribute: '_email' }] };
    const refused = await aggregate(emails);
    expect([refused.status, refused.body.details?.path]).toEqual([403, 'aggregations[0].attribute']);
    const allowed = await aggregate(emails, { scopes: [...SCOPES, 'PROJECT_AUDIENCE_DATA_BASIC'] });
    expect(allowed.body.metadata.aggregations[0].buckets.map((b: { value: string }) => b.value)).toEqual(['ada@example.com', 'bob@example.com']);
    expect((await aggregate({ aggregations: [{ type: 'terms', attribute: 'loyalty_tier' }] }, { dataMode: 'blocked' })).status).toBe(403);
  });
});
