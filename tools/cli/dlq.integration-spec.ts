import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createProducer, type Producer } from '@meld/kafka';
import { testEnv, waitFor } from '@meld/testing';
import { Kafka, logLevel } from 'kafkajs';
import { deadLetterMessage } from '../../libs/kafka/src/dead-letter';

const run = promisify(execFile);
const meld = join(__dirname, 'meld.js');

/** `meld dlq list|replay` against the real broker (ADR 0112), on a topic of this test's own. */
describe('meld dlq', () => {
  const env = testEnv();
  const source = `meld-test-dlq-${randomUUID()}`;
  let producer: Producer;

  const cli = async (...args: string[]) => (await run(process.execPath, [meld, 'dlq', ...args], { env: { ...process.env, MELD_KAFKA_BROKERS: env.kafkaBrokers.join(',') } })).stdout;
  const deadLetter = (i: number) =>
    deadLetterMessage(
      {
        topic: source,
        partition: i % 2,
        offset: String(10 + i),
        key: Buffer.from(`key-${i}`),
        value: Buffer.from(JSON.stringify({ i })),
        headers: { 'schema-version': '1' },
        reason: 'retries-exhausted',
        error: `Error: still failing ${i}`,
        attempts: 5,
      },
      'test-group',
    );

  /** Everything on the source topic so far, read by a fresh group. */
  async function sourceMessages(expected: number) {
    const kafka = new Kafka({ brokers: env.kafkaBrokers, clientId: 'dlq-cli-test', logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: `dlq-cli-test-${randomUUID()}`, maxWaitTimeInMs: 100 });
    const seen: Array<{ key: string; value: string; headers: string[] }> = [];
    await consumer.connect();
    await consumer.subscribe({ topic: source, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.push({ key: String(message.key), value: String(message.value), headers: Object.keys(message.headers ?? {}) }) });
    try {
      await waitFor(`${expected} messages on the source topic`, async () => seen.length >= expected, { timeoutMs: 20000 });
      await new Promise((r) => setTimeout(r, 500));
      return seen;
    } finally {
      await consumer.disconnect();
    }
  }

  beforeAll(async () => {
    producer = createProducer({ brokers: env.kafkaBrokers, clientId: 'dlq-cli-test' });
    await producer.sendRaw(`${source}.dlq`, [0, 1, 2, 3, 4].map(deadLetter));
  });
  afterAll(() => producer?.disconnect());

  it('lists waiting dead letters with their error, key, offset and time, values never printed', async () => {
    const entries = JSON.parse(await cli('list', source, '--json')) as Array<Record<string, unknown>>;
    expect(entries.map((e) => e.key).sort()).toEqual(['key-0', 'key-1', 'key-2', 'key-3', 'key-4']);
    expect(entries.find((e) => e.key === 'key-3')).toMatchObject({ sourceTopic: source, sourcePartition: 1, sourceOffset: '13', reason: 'retries-exhausted', error: 'Error: still failing 3', attempts: 5, group: 'test-group' });
    expect(typeof entries[0].time).toBe('string');
    const text = await cli('list', `${source}.dlq`);
    expect(text).toContain('Error: still failing 2');
    expect(text).not.toContain('{"i":');
  }, 60000);

  it('replays to the source topic once: a second replay repeats nothing, a new dead letter is replayed alone', async () => {
    expect(await cli('replay', source)).toContain('replayed 5');
    const replayed = await sourceMessages(5);
    expect(replayed.map((m) => m.key).sort()).toEqual(['key-0', 'key-1', 'key-2', 'key-3', 'key-4']);
    expect(replayed.find((m) => m.key === 'key-2')?.value).toBe('{"i":2}');
    for (const m of replayed) expect(m.headers).toEqual(['schema-version']);

    expect(await cli('replay', source)).toContain('nothing to replay');
    expect(await cli('list', source)).toContain('no dead letters waiting');
    expect(JSON.parse(await cli('list', source, '--all', '--json'))).toHaveLength(5);

    await producer.sendRaw(`${source}.dlq`, [deadLetter(5)]);
    expect(await cli('replay', source)).toContain('replayed 1');
    expect((await sourceMessages(6)).map((m) => m.key).sort()).toEqual(['key-0', 'key-1', 'key-2', 'key-3', 'key-4', 'key-5']);
  }, 120000);

  it('names the usage on a bad call', async () => {
    await expect(cli('drop', source)).rejects.toMatchObject({ stderr: expect.stringContaining('usage: meld dlq list <topic>') });
  });
});
