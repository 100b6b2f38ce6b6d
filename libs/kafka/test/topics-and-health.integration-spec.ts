import { createServer, type Socket } from 'node:net';
import { Kafka, logLevel } from 'kafkajs';
import { allTopicNames } from '@meld/contracts';
import { createKafkaHealthCheck, ensureTopics, isDevelopmentBroker, kafkaHealth, missingTopics } from '../src';
import { testBrokers, uniqueId } from './kafka-test-env';

const brokers = testBrokers();

describe('missingTopics against a real broker', () => {
  it('names only the topics the cluster lacks, without creating them', async () => {
    const topic = `test.missing.${uniqueId()}`;
    expect(await missingTopics(brokers, [...allTopicNames(), topic, topic])).toEqual([topic]);
    expect(await missingTopics(brokers, [topic])).toEqual([topic]); // asking did not auto-create it
  });
});

describe('ensureTopics against a real broker', () => {
  it('passes without CreateTopics when every topic already exists (the development broker pre-creates them)', async () => {
    const result = await ensureTopics(brokers, allTopicNames());
    expect(result.created).toEqual([]);
    expect(result.existing.sort()).toEqual(allTopicNames().sort());
  });

  it('creates a missing topic where CreateTopics works, and otherwise names it without auto-creating it', async () => {
    const topic = `test.ensure.${uniqueId()}`;
    let outcome: 'created' | 'missing';
    try {
      const result = await ensureTopics(brokers, [topic]);
      expect(result.created).toEqual([topic]);
      outcome = 'created';
    } catch (err) {
      expect((err as Error).message).toContain(`Kafka topics missing: ${topic}`);
      outcome = 'missing';
    }
    const admin = new Kafka({ brokers, clientId: 'test', logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    const exists = (await admin.listTopics()).includes(topic);
    await admin.disconnect();
    expect(exists).toBe(outcome === 'created');
  });

  it('creates throwaway topics through metadata when asked to (tests, benchmarks)', async () => {
    const topic = `test.ensure.auto.${uniqueId()}`;
    const result = await ensureTopics(brokers, [topic], { autoCreateFallback: true });
    expect(result.created).toEqual([topic]);
  });
});

describe('kafka health', () => {
  it('is ok against the broker, quickly', async () => {
    const admin = new Kafka({ brokers, clientId: 'test', logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    const health = await kafkaHealth(admin, { topics: allTopicNames() });
    await admin.disconnect();
    expect(health).toMatchObject({ ok: true });
    expect(health.latencyMs).toBeLessThan(1500);
  });

  it('reports a missing topic', async () => {
    const check = createKafkaHealthCheck({ brokers, clientId: 'test', topics: [`test.nope.${uniqueId()}`] });
    const health = await check.check();
    await check.close();
    expect(health).toMatchObject({ ok: false, error: expect.stringContaining('topics missing') });
  });

  it('answers not-ok within its timeout when no broker listens', async () => {
    const check = createKafkaHealthCheck({ brokers: ['127.0.0.1:1'], clientId: 'test', timeoutMs: 500 });
    const started = Date.now();
    const health = await check.check();
    await check.close();
    expect(health.ok).toBe(false);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('answers not-ok within its timeout when the broker accepts but never answers', async () => {
    const sockets = new Set<Socket>();
    const server = createServer((socket) => void sockets.add(socket)); // a hung broker
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const check = createKafkaHealthCheck({ brokers: [`127.0.0.1:${port}`], clientId: 'test', timeoutMs: 300 });
    const started = Date.now();
    const health = await check.check();
    const took = Date.now() - started;
    await check.close();
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
    expect(health.ok).toBe(false);
    expect(took).toBeLessThan(1000);
  });
});

describe('isDevelopmentBroker against the test broker', () => {
  it('recognises the development broker the tests run on (librdkafka mock cluster)', async () => {
    const kafka = new Kafka({ brokers, clientId: 'test', logLevel: logLevel.NOTHING });
    expect(await isDevelopmentBroker(kafka)).toBe(true);
  });
});
