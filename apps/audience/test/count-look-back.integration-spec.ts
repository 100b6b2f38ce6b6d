import { randomUUID } from 'node:crypto';
import type { ClickHouse } from '@meld/clickhouse';
import { EventTypeEntity, OrganizationEntity } from '@meld/db';
import { AudienceSnapshotFixture, seedTenancy, signedPrincipal, startAppUnderTest, type Json } from '@meld/fixtures';
import { migratedTestClickHouse } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { appDefinition } from '../src/app.definition';

const DAY = 86_400;

/**
 * An audience count on events counts the history the project keeps: the plan's look-back (m: 90
 * days) or a type's shorter `retentionDays`, whatever the timeframe (system.md §4, ADR 0060).
 * Older events, accepted by ingest ("usable for segmentation") and stored until the hourly
 * retention run deletes them (ADR 0168), are written here as the probes sink writes them.
 */
describe('audience count: events within the kept history', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let ch: ClickHouse;
  let tenancy: Awaited<ReturnType<typeof seedTenancy>>;
  const now = Math.floor(Date.now() / 1000);
  // recent: a purchase 10 days ago; old: one 100 days ago; both: one of each. A visit 10 days ago each (kept 7 days).
  const [recent, old, both] = [randomUUID(), randomUUID(), randomUUID()];

  beforeAll(async () => {
    ch = await migratedTestClickHouse();
    ({ app, base, db } = await startAppUnderTest(appDefinition));
    tenancy = await seedTenancy(db, 'count-look-back');
    await db.getRepository(OrganizationEntity).update(tenancy.organization.id, { plan: 'm' });
    // seedTenancy declares `purchase` (retention null: the look-back).
    await db.getRepository(EventTypeEntity).insert({ projectId: tenancy.project.id, uid: 'visit', name: 'Visit', category: 'contact_behaviour', retentionDays: 7 });
    const contact = (audienceId: string) => ({ project_id: tenancy.project.id, audience_id: audienceId, version: '1', deleted: 0 as const, str_keys: [], str_values: [], num_keys: [], num_values: [], channels: [], updated_at: now });
    await new AudienceSnapshotFixture(ch, db).write([contact(recent), contact(old), contact(both)]);
    const ds = tenancy.dataSource.id;
    await ch.insert(
      'audience_membership',
      [recent, old, both].map((aid) => ({ project_id: tenancy.project.id, data_source_id: ds, user_id: `u-${aid}`, audience_id: aid, version: '1', deleted: 0 })),
    );
    const event = (aid: string, type: string, ageDays: number) => ({
      project_id: tenancy.project.id,
      data_source_id: ds,
      user_id: `u-${aid}`,
      event_id: randomUUID(),
      event_type: type,
      event_date: now - ageDays * DAY,
      received_at: now,
      param_keys: [],
      param_values: [],
    });
    await ch.insert('events', [event(recent, 'purchase', 10), event(old, 'purchase', 100), event(both, 'purchase', 10), event(both, 'purchase', 100), ...[recent, old, both].map((aid) => event(aid, 'visit', 10))]);
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
  });

  const count = async (root: unknown): Promise<number> => {
    const url = `${base}/v1/project/${tenancy.project.uid}/audience/count`;
    const principal = { kind: 'product' as const, tokenId: randomUUID(), organizationId: tenancy.organization.id, plan: 'm' as const, scopes: ['PROJECT_AUDIENCE_READ' as const], project: { id: tenancy.project.id, uid: tenancy.project.uid, dataMode: 'normal' as const }, dataSourceId: null };
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...signedPrincipal(principal, { app: 'audience', method: 'POST', url }) }, body: JSON.stringify({ version: '0.0.1', root }) });
    const body = (await res.json()) as Json;
    expect(res.status).toBe(200);
    return (body.metadata as { totalHits: number }).totalHits;
  };
  const purchase = (extra: object = {}) => ({ type: 'group_event', eventType: 'purchase', ...extra });

  it('counts events within the plan look-back only, with or without a longer timeframe', async () => {
    expect(await count(purchase())).toBe(2);
    expect(await count(purchase({ timeframe: { lastDays: 365 } }))).toBe(2);
    expect(await count(purchase({ timeframe: { from: '1970-01-01', to: new Date((now - 95 * DAY) * 1000).toISOString() } }))).toBe(0);
    expect(await count(purchase({ count: { operator: 'at-least', value: 2 } }))).toBe(0);
  });

  it('counts a contact whose events are all older as one without any', async () => {
    expect(await count(purchase({ count: { operator: 'exactly', value: 0 } }))).toBe(1);
    expect(await count(purchase({ negate: true }))).toBe(1);
  });

  it("keeps a type's shorter retention", async () => {
    expect(await count({ type: 'group_event', eventType: 'visit' })).toBe(0);
    expect(await count({ type: 'group_event', eventType: 'visit', count: { operator: 'at-most', value: 0 } })).toBe(3);
  });
});
