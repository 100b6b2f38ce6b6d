import { randomUUID } from 'node:crypto';
import { type ClickHouse, createClickHouse, migrateClickHouse, sql } from '@meld/clickhouse';
import { Topics, keys, type AudienceChange, type EventAccepted } from '@meld/contracts';
import { createProducer, type Producer } from '@meld/kafka';
import { bootstrapApp, meldAppModule } from '@meld/platform';
import { testEnv, waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import { appDefinition } from '../src/app.definition';
import { MembershipRepository } from '../src/sinks/membership.repository';
import { SINK_OPTIONS, sinkOptions } from '../src/sinks/sink-options';
import { SinksConsumer } from '../src/sinks/sinks.consumer';

/** The probes app in-process: meld.events.v1 and meld.audience.v1 in, ClickHouse rows out. */
describe('probes ClickHouse sinks', () => {
  let app: INestApplication;
  let producer: Producer;
  let ch: ClickHouse;
  let members: MembershipRepository;
  const projectId = randomUUID();
  const ds1 = randomUUID();
  const ds2 = randomUUID();

  beforeAll(async () => {
    const env = testEnv();
    ch = createClickHouse({ url: env.clickhouseUrl, database: env.clickhouseDatabase });
    await ch.ensureDatabase();
    await migrateClickHouse({ client: ch });
    members = new MembershipRepository(ch);
    const tag = randomUUID();
    const eventsGroupId = `probes-events-test-${tag}`;
    app = await bootstrapApp({
      app: 'probes',
      // Groups of their own: apps started elsewhere on the same broker must not take these partitions.
      module: meldAppModule(
        {
          ...appDefinition,
          providers: [
            ...(appDefinition.providers ?? []),
            { provide: SINK_OPTIONS, useValue: { ...sinkOptions({}), fromBeginning: false, eventsGroupId, audienceGroupId: `probes-audience-test-${tag}` } },
          ],
        },
        {
          LOG_LEVEL: process.env.PROBES_TEST_LOG_LEVEL ?? 'silent',
          MELD_PRINCIPAL_SECRET: 'meld-test-principal-secret',
          MELD_CLICKHOUSE_URL: env.clickhouseUrl,
          MELD_CLICKHOUSE_DB: env.clickhouseDatabase,
          MELD_REDIS_URL: env.redisUrl,
          MELD_KAFKA_BROKERS: env.kafkaBrokers.join(','),
        },
      ),
      host: '127.0.0.1',
      port: 0,
    });
    await app.get(SinksConsumer).started();
    producer = createProducer({ brokers: env.kafkaBrokers, clientId: 'probes-test' });
    // New groups start at the end (not the backlog other tests left); once a canary of each
    // topic is stored, every partition's start position is fixed and nothing later is skipped.
    const canary = randomUUID();
    await waitFor('events consumer positioned', async () => {
      await sendEvents([event(ds1, 'canary', canary)]);
      return waitFor('canary', async () => (await ch.query(sql`SELECT 1 FROM events WHERE project_id = ${projectId} AND event_id = ${canary}`)).length > 0, { timeoutMs: 2000 }).catch(() => false);
    }, { timeoutMs: 40000 });
    const canaryAudience = randomUUID();
    await waitFor('audience consumer positioned', async () => {
      await sendAudience([snapshot(canaryAudience, [`${ds1}/canary`], '2026-11-20T09:00:00.000Z')]);
      return waitFor('canary', async () => (await memberRefs(canaryAudience)).length > 0, { timeoutMs: 2000 }).catch(() => false);
    }, { timeoutMs: 40000 });
  }, 90000);

  afterAll(async () => {
    await producer?.disconnect();
    await app?.close();
    await ch?.close();
  });

  const event = (dataSourceId: string, userId: string, eventId: string, over: Partial<EventAccepted> = {}): EventAccepted => ({
    schemaVersion: 1,
    projectId,
    dataSourceId,
    userId,
    eventId,
    eventType: 'purchase',
    eventDate: '2026-11-20T10:00:00.000Z',
    receivedAt: '2026-11-20T10:00:01.000Z',
    parameters: { amount: 12.5, 'product-id': 'p-1' },
    ...over,
  });
  const sendEvents = (events: EventAccepted[]) =>
    producer.send(
      Topics.events,
      events.map((e) => ({ key: keys.sourceContact(e.projectId, e.dataSourceId, e.userId), value: e })),
    );
  const sendAudience = (messages: AudienceChange[]) => producer.send(Topics.audience, messages.map((m) => ({ key: keys.audienceContact(m.projectId, m.audienceId), value: m })));
  const snapshot = (audienceId: string, dsContactIds: string[], at: string): AudienceChange => ({
    schemaVersion: 1,
    kind: 'snapshot',
    projectId,
    audienceId,
    version: 1,
    at,
    attributes: {},
    dataSources: [],
    dsContactIds,
  });
  const memberRefs = async (audienceId: string) => (await members.currentMembers(projectId, audienceId)).map((m) => `${m.dataSourceId}/${m.userId}`).sort();

  it('stores an event produced twice once, with its parameters as JSON values', async () => {
    const e = event(ds1, 'u-dup', `ev-${randomUUID()}`);
    await sendEvents([e]);
    await sendEvents([e, event(ds1, 'u-dup', `ev-${randomUUID()}`)]);
    await waitFor('both events stored', async () => {
      const [r] = await ch.query<{ n: string }>(sql`SELECT uniqExact(event_id) AS n FROM events WHERE project_id = ${projectId} AND user_id = 'u-dup'`);
      return Number(r.n) >= 2;
    });
    const [final] = await ch.query<{ n: string }>(sql`SELECT count() AS n FROM events FINAL WHERE project_id = ${projectId} AND event_id = ${e.eventId}`);
    expect(Number(final.n)).toBe(1);
    const [distinct] = await ch.query<{ n: string }>(sql`SELECT uniqExact(event_id) AS n FROM events WHERE project_id = ${projectId} AND user_id = 'u-dup'`);
    expect(Number(distinct.n)).toBe(2);
    const [row] = await ch.query<{ param_keys: string[]; param_values: string[]; ts: string }>(
      sql`SELECT param_keys, param_values, toUInt32(event_date) AS ts FROM events WHERE project_id = ${projectId} AND event_id = ${e.eventId} LIMIT 1`,
    );
    expect(row.param_keys).toEqual(['amount', 'product-id']);
    expect(row.param_values.map((v) => JSON.parse(v))).toEqual([12.5, 'p-1']);
    expect(Number(row.ts)).toBe(Date.parse(e.eventDate) / 1000);
  });

  it('follows merges, splits and tombstones of the audience contacts', async () => {
    const a = randomUUID();
    const b = randomUUID();
    const c1 = `${ds1}/alice`;
    const c2 = `${ds2}/ali/ce`; // a _user_id may hold '/'
    await sendAudience([snapshot(a, [c1], '2026-11-20T10:00:00.000Z'), snapshot(b, [c2], '2026-11-20T10:00:00.000Z')]);
    await waitFor('two audience contacts', async () => (await memberRefs(a)).length === 1 && (await memberRefs(b)).length === 1);

    // Merge: b absorbed into a (the survivor's snapshot lists both; b is tombstoned in the same step).
    const merged = '2026-11-20T10:01:00.000Z';
    await sendAudience([{ schemaVersion: 1, kind: 'tombstone', projectId, audienceId: b, version: 2, at: merged }, snapshot(a, [c1, c2].sort(), merged)]);
    await waitFor('merged', async () => (await memberRefs(a)).length === 2);
    expect(await memberRefs(b)).toEqual([]);

    // Split: c2 leaves a for a new audience contact.
    const c = randomUUID();
    const split = '2026-11-20T10:02:00.000Z';
    await sendAudience([snapshot(c, [c2], split), snapshot(a, [c1], split)]);
    await waitFor('split', async () => JSON.stringify(await memberRefs(a)) === JSON.stringify([c1]) && (await memberRefs(c)).length === 1);
    expect(await memberRefs(c)).toEqual([c2]);

    // An older snapshot arriving late changes nothing.
    await sendAudience([snapshot(a, [c1, c2].sort(), merged)]);
    // Tombstone: nobody left in a.
    await sendAudience([{ schemaVersion: 1, kind: 'tombstone', projectId, audienceId: a, version: 9, at: '2026-11-20T10:03:00.000Z' }]);
    await waitFor('tombstoned', async () => (await memberRefs(a)).length === 0);
    expect(await memberRefs(c)).toEqual([c2]);
  });
});
