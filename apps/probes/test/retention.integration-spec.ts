import type { ClickHouse } from '@meld/clickhouse';
import { sql } from '@meld/clickhouse';
import { EventTypeEntity, OrganizationEntity } from '@meld/db';
import { seedTenancy } from '@meld/fixtures';
import { metricsRegistry } from '@meld/platform';
import { waitFor } from '@meld/testing';
import { Logger, type INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { RetentionPruner } from '../src/retention/retention.pruner';
import { eventRow, startProbes } from './probes.fixture';

const DAY = 86_400_000;

/** Retention pruning in ClickHouse (issue 15 item 3, ADR 0168): the plan look-back for every type, a shorter retentionDays per type. */
describe('retention pruning', () => {
  let app: INestApplication;
  let db: DataSource;
  let ch: ClickHouse;
  let pruner: RetentionPruner;

  beforeAll(async () => {
    ({ app, db, ch } = await startProbes());
    pruner = app.get(RetentionPruner);
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
  });

  const ids = async (projectId: string) => (await ch.query<{ event_id: string }>(sql`SELECT event_id FROM events WHERE project_id = ${projectId} ORDER BY event_id`)).map((r) => r.event_id);

  it('deletes what is past the look-back or the type’s retention, counts it, logs the run, and leaves the kept events to a second run', async () => {
    const m = await seedTenancy(db, 'retention-m');
    await db.getRepository(EventTypeEntity).insert({ projectId: m.project.id, uid: 'page_view', name: 'Page view', category: 'contact_behaviour', retentionDays: 7 });
    const xl = await seedTenancy(db, 'retention-xl');
    await db.getRepository(OrganizationEntity).update(xl.organization.id, { plan: 'xl' });
    const ago = (days: number) => new Date(Date.now() - days * DAY);
    await ch.insert('events', [
      eventRow(m.project.id, m.dataSource.id, 'u', 'purchase', ago(100), {}, 'm-purchase-100'),
      eventRow(m.project.id, m.dataSource.id, 'u', 'purchase', ago(10), {}, 'm-purchase-10'),
      eventRow(m.project.id, m.dataSource.id, 'u', 'page_view', ago(10), {}, 'm-view-10'),
      eventRow(m.project.id, m.dataSource.id, 'u', 'page_view', ago(3), {}, 'm-view-3'),
      eventRow(xl.project.id, xl.dataSource.id, 'u', 'purchase', ago(100), {}, 'xl-purchase-100'),
    ]);
    const counter = () => metricsRegistry.getSingleMetric('meld_probes_retention_pruned_events_total')!.get().then((v) => v.values[0]?.value ?? 0);
    const before = await counter();
    const log = jest.spyOn(Logger.prototype, 'log');

    const first = await pruner.run();
    expect(first.mutations).toBe(1);
    expect(first.events).toBeGreaterThanOrEqual(2);
    expect((await counter()) - before).toBe(first.events);
    expect(log).toHaveBeenCalledWith(expect.objectContaining({ msg: 'retention run', mutations: first.mutations, events: first.events }));
    // Mutations apply in the background.
    await waitFor('the mutations', async () => (await ids(m.project.id)).length === 2, { timeoutMs: 30_000 });
    expect(await ids(m.project.id)).toEqual(['m-purchase-10', 'm-view-3']);
    expect(await ids(xl.project.id)).toEqual(['xl-purchase-100']);

    // Other suites share this ClickHouse database and may have old events due by now: the second
    // run is judged on this test's projects, which it must leave as they are.
    await pruner.run();
    expect(await ids(m.project.id)).toEqual(['m-purchase-10', 'm-view-3']);
    expect(await ids(xl.project.id)).toEqual(['xl-purchase-100']);
    log.mockRestore();
  }, 60000);
});
