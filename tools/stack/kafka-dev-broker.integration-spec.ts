// The development broker's long-poll proxy (ADR 0260) on a private broker: a waiting fetch is
// answered as soon as records arrive, as Kafka does, and clients never bypass the proxy.
import { Kafka, logLevel, type Consumer, type Producer } from 'kafkajs';

interface PrivateBroker {
  brokers: string;
  pid: number;
}
interface Stack {
  startBroker(options: { name: string; partitions?: number; topics?: string[]; messageMaxBytes?: number }): Promise<PrivateBroker>;
  stopBroker(name: string): Promise<void>;
}

// Plain CommonJS without type declarations (it must run before `npm install`).
const stack: Stack = require('./index');

const name = `long-poll-spec-${process.pid}`;
const topic = 'long-poll';
let broker: PrivateBroker;
let kafka: Kafka;

beforeAll(async () => {
  broker = await stack.startBroker({ name, topics: [`${topic}:2`] });
  kafka = new Kafka({ clientId: 'long-poll-spec', brokers: [broker.brokers], logLevel: logLevel.NOTHING });
}, 60_000);
afterAll(() => stack.stopBroker(name));

describe('development broker long-poll proxy', () => {
  it('names itself a long-polling development broker and points every client at the proxy', async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const cluster = await admin.describeCluster();
      expect(cluster.clusterId).toMatch(/^meldLongPoll[0-9a-f]+$/);
      expect(cluster.brokers.map((b) => `${b.host}:${b.port}`)).toEqual([broker.brokers]);
    } finally {
      await admin.disconnect();
    }
  });

  describe('an idle consumer fetching with a 1 s wait', () => {
    let consumer: Consumer;
    let producer: Producer;
    let fetches = 0;
    let arrived: ((at: number) => void) | undefined;

    beforeAll(async () => {
      consumer = kafka.consumer({ groupId: `${name}-group`, maxWaitTimeInMs: 1_000 });
      consumer.on(consumer.events.FETCH, () => void fetches++);
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({ eachMessage: async () => arrived?.(Date.now()) });
      producer = kafka.producer();
      await producer.connect();
    }, 30_000);
    afterAll(async () => {
      await producer.disconnect();
      await consumer.disconnect();
    });

    it('gets each record at once, not when its wait runs out', async () => {
      const latencies: number[] = [];
      // Pauses that land the send at different points of the 1 s wait.
      for (const pauseMs of [1_200, 350, 700, 50, 900]) {
        await new Promise((r) => setTimeout(r, pauseMs));
        const got = new Promise<number>((resolve) => (arrived = resolve));
        const sent = Date.now();
        await producer.send({ topic, acks: -1, messages: [{ key: `k${pauseMs}`, value: 'v' }] });
        latencies.push((await got) - sent);
      }
      // The bare mock answers at the end of the wait: a few hundred ms on average, up to 1 s.
      expect(Math.max(...latencies)).toBeLessThan(250);
    }, 30_000);

    it('fetches about once a second while nothing arrives', async () => {
      const before = fetches;
      await new Promise((r) => setTimeout(r, 3_000));
      expect(fetches - before).toBeLessThanOrEqual(4);
      expect(fetches - before).toBeGreaterThanOrEqual(2);
    }, 10_000);
  });
});

// Kafka refuses a partition's record batch above `message.max.bytes`; librdkafka's mock takes any
// size, so the proxy refuses it (ADR 0346) and a message too large for Kafka fails here too.
describe('development broker message.max.bytes', () => {
  const limited = `max-bytes-spec-${process.pid}`;
  let client: Kafka;
  let producer: Producer;
  beforeAll(async () => {
    const b = await stack.startBroker({ name: limited, topics: ['sized:2'], messageMaxBytes: 10_000 });
    client = new Kafka({ clientId: 'max-bytes-spec', brokers: [b.brokers], logLevel: logLevel.NOTHING, retry: { retries: 0 } });
    producer = client.producer();
    await producer.connect();
  }, 60_000);
  afterAll(async () => {
    await producer?.disconnect();
    await stack.stopBroker(limited);
  });

  it('refuses a batch above it with MESSAGE_TOO_LARGE, appending nothing, and takes what fits', async () => {
    const refused = await producer.send({ topic: 'sized', acks: -1, messages: [{ key: 'a', value: 'x'.repeat(12_000) }] }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ type: 'MESSAGE_TOO_LARGE', retriable: false });
    // Small messages that add up to more than the limit in one partition's batch: refused too, as Kafka does.
    const many = await producer.send({ topic: 'sized', acks: -1, messages: Array.from({ length: 30 }, () => ({ key: 'same', value: 'y'.repeat(500) })) }).catch((e: unknown) => e);
    expect(many).toMatchObject({ type: 'MESSAGE_TOO_LARGE' });
    await producer.send({ topic: 'sized', acks: -1, messages: [{ key: 'b', value: 'z'.repeat(9_000) }, { key: 'c', value: 'ok' }] });
    const admin = client.admin();
    await admin.connect();
    try {
      const offsets = await admin.fetchTopicOffsets('sized');
      expect(offsets.reduce((n, p) => n + Number(p.high), 0)).toBe(2);
    } finally {
      await admin.disconnect();
    }
  }, 30_000);
});
