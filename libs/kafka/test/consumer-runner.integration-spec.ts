import { Registry } from 'prom-client';
import { z } from 'zod';
import {
  createConsumerRunner,
  DlqHeaders,
  headerString,
  RetriableError,
  topicHandler,
  type ConsumedMessage,
  type ConsumerRunner,
  type MessageHandler,
} from '../src';
import { collect, freshTopic, rawSend, runnerTestHooks, testBrokers, uniqueId, waitFor } from './kafka-test-env';

// Against the real development broker (or real Kafka): no mocks of Kafka here.
const brokers = testBrokers();
const Item = z.object({ key: z.string(), seq: z.number().int() });
type Item = z.infer<typeof Item>;

describe('consumer runner against a real broker', () => {
  const { producer, runners, readers } = runnerTestHooks(brokers);

  async function run(topic: string, handle: MessageHandler<Item>, extra: Partial<Parameters<typeof createConsumerRunner>[0]> = {}, groupId = `test-${uniqueId()}`): Promise<ConsumerRunner> {
    const runner = createConsumerRunner({
      brokers,
      clientId: 'test-consumer',
      groupId,
      handlers: [topicHandler({ topic, schema: Item, handle })],
      metrics: new Registry(),
      backoff: { maxAttempts: 3, initialDelayMs: 5, maxDelayMs: 20 },
      ...extra,
    });
    runners.push(runner);
    await runner.start();
    return runner;
  }

  function items(keys: number, perKey: number, tag = uniqueId()): Array<{ key: string; value: Item }> {
    const out: Array<{ key: string; value: Item }> = [];
    for (let seq = 0; seq < perKey; seq++) for (let k = 0; k < keys; k++) out.push({ key: `${tag}-k${k}`, value: { key: `${tag}-k${k}`, seq } });
    return out;
  }

  it('round-trips produced messages to the handler, with the schema version header and metrics', async () => {
    const topic = await freshTopic(brokers, 'roundtrip');
    const metrics = new Registry();
    const got: Array<ConsumedMessage<Item>> = [];
    await run(topic, (m) => void got.push(m), { metrics });
    const sent = items(50, 10);
    await producer.send(topic, sent, { schemaVersion: 2, schema: Item });
    await waitFor(() => got.length >= sent.length, 30_000, 'all messages');
    expect(got).toHaveLength(sent.length);
    expect(new Set(got.map((m) => `${m.value.key}/${m.value.seq}`)).size).toBe(sent.length);
    expect(got.every((m) => m.schemaVersion === 2 && m.key === m.value.key && m.topic === topic)).toBe(true);
    const processed = await metrics.getSingleMetric('meld_kafka_messages_processed_total')?.get();
    expect(processed?.values.find((v) => v.labels.topic === topic)?.value).toBe(sent.length);
  });

  it('keeps per-key order while processing keys concurrently', async () => {
    const topic = await freshTopic(brokers, 'order');
    const seen = new Map<string, number[]>();
    let running = 0;
    let peak = 0;
    let total = 0;
    await run(
      topic,
      async (m) => {
        running++;
        peak = Math.max(peak, running);
        // Uneven handler times shuffle the interleaving between keys.
        await new Promise((r) => setTimeout(r, m.value.seq % 3));
        const list = seen.get(m.value.key) ?? [];
        list.push(m.value.seq);
        seen.set(m.value.key, list);
        running--;
        total++;
      },
      { concurrency: 8, partitionsConsumedConcurrently: 2 },
    );
    const sent = items(40, 50);
    await producer.send(topic, sent);
    await waitFor(() => total >= sent.length, 60_000, 'all messages');
    expect(seen.size).toBe(40);
    for (const seqs of seen.values()) expect(seqs).toEqual([...Array(50).keys()]);
    // 2 partitions at once x 8 lanes: more than one key ran at a time, never more than the bound.
    expect(peak).toBeGreaterThan(1);
    expect(peak).toBeLessThanOrEqual(16);
  });

  it('dead-letters an invalid message with the error, the source and the offset in headers', async () => {
    const topic = await freshTopic(brokers, 'invalid');
    const got: Item[] = [];
    // Group joins take seconds on the development broker: join both at once.
    const [dlq] = await Promise.all([collect(brokers, `${topic}.dlq`), run(topic, (m) => void got.push(m.value))]);
    readers.push(dlq.stop);
    await rawSend(brokers, topic, [
      { key: 'same', value: 'this is not json' },
      { key: 'same', value: JSON.stringify({ key: 'same', seq: 'one' }) },
      { key: 'same', value: JSON.stringify({ key: 'same', seq: 2 }) },
    ]);
    await waitFor(() => got.length >= 1 && dlq.messages.length >= 2, 30_000, 'handler and dead letters');
    expect(got).toEqual([{ key: 'same', seq: 2 }]);
    const [notJson, badSchema] = dlq.messages;
    expect(notJson.value?.toString()).toBe('this is not json');
    expect(notJson.key?.toString()).toBe('same');
    expect(headerString(notJson.headers, DlqHeaders.reason)).toBe('invalid');
    expect(headerString(notJson.headers, DlqHeaders.error)).toMatch(/not JSON/);
    expect(headerString(notJson.headers, DlqHeaders.topic)).toBe(topic);
    expect(headerString(notJson.headers, DlqHeaders.offset)).toBe('0');
    expect(headerString(badSchema.headers, DlqHeaders.offset)).toBe('1');
    expect(headerString(badSchema.headers, DlqHeaders.partition)).toBe(headerString(notJson.headers, DlqHeaders.partition));
    expect(headerString(badSchema.headers, DlqHeaders.error)).toMatch(/seq/);
  });

  it('retries a handler that fails twice, then processes the message exactly once', async () => {
    const topic = await freshTopic(brokers, 'retry');
    const attempts: number[] = [];
    let succeeded = 0;
    const [dlq] = await Promise.all([
      collect(brokers, `${topic}.dlq`),
      run(topic, (m) => {
        attempts.push(m.attempt);
        if (m.attempt <= 2) throw new RetriableError(`store unavailable (attempt ${m.attempt})`);
        succeeded++;
      }),
    ]);
    readers.push(dlq.stop);
    await producer.send(topic, [{ key: 'r', value: { key: 'r', seq: 0 } }]);
    await waitFor(() => succeeded === 1, 30_000, 'success after retries');
    // A later message proves the partition moved on and the first was not redelivered.
    await producer.send(topic, [{ key: 'r', value: { key: 'r', seq: 1 } }]);
    await waitFor(() => succeeded === 2, 30_000, 'next message');
    expect(attempts).toEqual([1, 2, 3, 1, 2, 3]);
    expect(dlq.messages).toHaveLength(0);
  });

  it('dead-letters a permanently failing message and moves the partition on', async () => {
    const topic = await freshTopic(brokers, 'poison');
    const processed: number[] = [];
    const [dlq] = await Promise.all([
      collect(brokers, `${topic}.dlq`),
      run(topic, (m) => {
        if (m.value.seq === 0) throw new Error('cannot ever work');
        processed.push(m.value.seq);
      }),
    ]);
    readers.push(dlq.stop);
    // One key: all three land on one partition, the poison first.
    await producer.send(topic, [0, 1, 2].map((seq) => ({ key: 'p', value: { key: 'p', seq } })));
    await waitFor(() => processed.length === 2 && dlq.messages.length === 1, 30_000, 'poison dead-lettered, rest processed');
    expect(processed).toEqual([1, 2]);
    const dead = dlq.messages[0];
    expect(JSON.parse(dead.value!.toString())).toEqual({ key: 'p', seq: 0 });
    expect(headerString(dead.headers, DlqHeaders.reason)).toBe('retries-exhausted');
    expect(headerString(dead.headers, DlqHeaders.attempts)).toBe('3');
    expect(headerString(dead.headers, DlqHeaders.error)).toBe('Error: cannot ever work');
    expect(headerString(dead.headers, 'schema-version')).toBe('1');
  });

  it('resumes after stop() mid-stream without losing a message (at-least-once)', async () => {
    const topic = await freshTopic(brokers, 'resume');
    const shortSession = { sessionTimeoutMs: 6000, heartbeatIntervalMs: 1000 };
    const groupId = `test-resume-${uniqueId()}`;
    const sent = items(100, 50);
    await producer.send(topic, sent);
    const counts = new Map<string, number>();
    const record = (m: ConsumedMessage<Item>): void => {
      const id = `${m.value.key}/${m.value.seq}`;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    };

    let first = 0;
    const runner1 = await run(
      topic,
      async (m) => {
        record(m);
        first++;
        await new Promise((r) => setImmediate(r));
      },
      // Small fetches: the first consumer stops part-way. A short session: the development
      // broker makes a rejoining group wait out the leaver's session timeout despite its
      // LeaveGroup (measured: rejoin takes session timeout - 1 s).
      { maxBytesPerPartition: 16 * 1024, ...shortSession },
      groupId,
    );
    await waitFor(() => first >= 1000, 30_000, 'first consumer to get going');
    await runner1.stop();
    const afterStop = first;
    expect(afterStop).toBeLessThan(sent.length);

    let second = 0;
    await run(
      topic,
      (m) => {
        record(m);
        second++;
      },
      shortSession,
      groupId,
    );
    await waitFor(() => counts.size >= sent.length, 60_000, 'every message seen');
    const duplicates = [...counts.values()].reduce((n, c) => n + c - 1, 0);
    // At-least-once: nothing lost. stop() commits the finished batch, so the second
    // consumer starts where the first stopped; duplicates are reported, none expected.
    console.log(`resume: first consumer ${afterStop}, second ${second}, duplicates ${duplicates}`);
    expect(counts.size).toBe(sent.length);
    expect(afterStop + second).toBe(sent.length + duplicates);
    expect(duplicates).toBe(0);
  });
});
