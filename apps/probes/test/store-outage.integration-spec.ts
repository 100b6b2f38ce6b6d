import { randomUUID } from 'node:crypto';
import { type ClickHouse, createClickHouse, sql } from '@meld/clickhouse';
import { Topics, keys, type AudienceChange, type EventAccepted } from '@meld/contracts';
import { createProducer, type Producer } from '@meld/kafka';
import { TcpProxy, testEnv, waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { MembershipRepository } from '../src/sinks/membership.repository';
import { awaitPositioned, startProbes } from './app.fixture';

/** Seconds ClickHouse is cut for; the issue asks for 60, `MELD_OUTAGE_SECONDS` shortens it while working on this. */
const OUTAGE_SECONDS = Number(process.env.MELD_OUTAGE_SECONDS) || 60;

/**
 * ClickHouse goes away under load (a TcpProxy cut between probes and the shared server): the
 * events sink and the audience sinks pause until it returns (ADR 0111), nothing is
 * dead-lettered and every event and snapshot sent before and during the outage is stored.
 */
describe('probes sinks through a ClickHouse outage', () => {
  const env = testEnv();
  const projectId = randomUUID();
  const ds = randomUUID();
  let proxy: TcpProxy;
  let app: INestApplication;
  let groups: { eventsGroupId: string; audienceGroupId: string };
  let ch: ClickHouse;
  let producer: Producer;
  let dlqReader: Consumer;
  const deadLetters: string[] = [];

  const event = (eventId: string): EventAccepted => ({
    schemaVersion: 1,
    projectId,
    dataSourceId: ds,
    userId: `u-${eventId.slice(0, 6)}`,
    eventId,
    eventType: 'purchase',
    eventDate: '2026-11-20T10:00:00.000Z',
    receivedAt: '2026-11-20T10:00:01.000Z',
    parameters: { amount: 1 },
  });
  const snapshot = (audienceId: string): AudienceChange => ({
    schemaVersion: 1,
    kind: 'snapshot',
    projectId,
    audienceId,
    version: 1,
    at: '2026-11-20T09:00:00.000Z',
    attributes: {},
    dataSources: [],
    dsContactIds: [`${ds}/${audienceId}`],
  });
  const sendEvents = (ids: string[]) => producer.send(Topics.events, ids.map((id) => ({ key: keys.sourceContact(projectId, ds, `u-${id.slice(0, 6)}`), value: event(id) })));
  const sendAudience = (ids: string[]) => producer.send(Topics.audience, ids.map((id) => ({ key: keys.audienceContact(projectId, id), value: snapshot(id) })));
  const storedEvents = async () => Number((await ch.query<{ n: string }>(sql`SELECT uniqExact(event_id) AS n FROM events WHERE project_id = ${projectId}`))[0].n);
  const members = new Set<string>();
  const storedMembers = async (ids: string[]) => {
    const repo = new MembershipRepository(ch);
    const missing = ids.filter((id) => !members.has(id));
    if (missing.length) for (const id of (await repo.currentMembersOfMany(projectId, missing)).keys()) members.add(id);
    return members.size;
  };

  beforeAll(async () => {
    proxy = await TcpProxy.start(env.clickhouseUrl);
    ch = createClickHouse({ url: env.clickhouseUrl, database: env.clickhouseDatabase });
    // Three attempts, not the app's 1000: the outage must be ridden out by the pause, not by a huge bound.
    ({ app, groups } = await startProbes({ clickhouseUrl: proxy.via(env.clickhouseUrl).replace(/\/$/, ''), maxAttempts: 3 }));
    producer = createProducer({ brokers: env.kafkaBrokers, clientId: 'probes-outage-test' });
    const kafka = new Kafka({ brokers: env.kafkaBrokers, clientId: 'probes-outage-test', logLevel: logLevel.NOTHING });
    dlqReader = kafka.consumer({ groupId: `probes-outage-dlq-${randomUUID()}`, maxWaitTimeInMs: 100 });
    await dlqReader.connect();
    await dlqReader.subscribe({ topics: [`${Topics.events}.dlq`, `${Topics.audience}.dlq`], fromBeginning: true });
    await dlqReader.run({
      eachMessage: async ({ topic, message }) => {
        const group = String(message.headers?.['dlq-group'] ?? '');
        // Only this test's project: other suites' bad messages on the shared topics are rightly dead-lettered too.
        const ours = message.key?.toString().startsWith(`${projectId}/`);
        if (ours && (group === groups.eventsGroupId || group === groups.audienceGroupId)) deadLetters.push(`${topic} ${String(message.headers?.['dlq-error'])}`);
      },
    });
    const canary = randomUUID();
    await awaitPositioned('events', () => sendEvents([canary]), async () => (await storedEvents()) > 0);
    const canaryAudience = randomUUID();
    await awaitPositioned('audience', () => sendAudience([canaryAudience]), async () => (await storedMembers([canaryAudience])) > 0);
  }, 120000);

  afterAll(async () => {
    await dlqReader?.disconnect();
    await producer?.disconnect();
    await app?.close();
    await ch?.close();
    await proxy?.stop();
  });

  it(`stores everything sent before and during a ${OUTAGE_SECONDS} s outage and dead-letters nothing`, async () => {
    const before = await storedEvents();
    const audiences: string[] = [];
    let events = 0;
    const wave = async () => {
      const ids = Array.from({ length: 50 }, () => randomUUID());
      const aud = Array.from({ length: 5 }, () => randomUUID());
      await sendEvents(ids);
      await sendAudience(aud);
      events += ids.length;
      audiences.push(...aud);
    };
    await wave();
    await proxy.stop();
    const until = Date.now() + OUTAGE_SECONDS * 1000;
    while (Date.now() < until) {
      await wave();
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    expect(deadLetters).toEqual([]);
    await proxy.resume();

    await waitFor(`all ${events} events stored`, async () => (await storedEvents()) === before + events, { timeoutMs: 90000, intervalMs: 1000 });
    await waitFor(`all ${audiences.length} snapshots stored`, async () => (await storedMembers(audiences)) === audiences.length + 1, { timeoutMs: 90000, intervalMs: 1000 });
    expect(deadLetters).toEqual([]);
  }, (OUTAGE_SECONDS + 240) * 1000);
});
