import { Registry } from 'prom-client';
import { z } from 'zod';
import { createSinkRunner, DeadLetterError, DlqHeaders, headerString, sinkHandler, type ConsumerRunner, type SinkRunnerOptions } from '../src';
import { collect, freshTopic, rawSend, runnerTestHooks, testBrokers, uniqueId, waitFor } from './kafka-test-env';

// Against the real development broker (or real Kafka): no mocks of Kafka here.
const brokers = testBrokers();
const Item = z.object({ key: z.string(), seq: z.number().int() });
type Item = z.infer<typeof Item>;
type Row = { id: string };

describe('sink runner against a real broker', () => {
  const { producer, runners, readers } = runnerTestHooks(brokers);

  const rowOf = (v: Item): Row => ({ id: `${v.key}/${v.seq}` });

  async function run(
    topic: string,
    write: (rows: Row[]) => Promise<void>,
    extra: Partial<SinkRunnerOptions> = {},
    toRow: (v: Item) => Row | undefined = rowOf,
    groupId = `test-sink-${uniqueId()}`,
  ): Promise<ConsumerRunner> {
    const runner = createSinkRunner({
      brokers,
      clientId: 'test-sink',
      groupId,
      sink: sinkHandler({ topic, schema: Item, toRow, write }),
      metrics: new Registry(),
      backoff: { maxAttempts: 3, initialDelayMs: 5, maxDelayMs: 20 },
      lingerMs: 20,
      ...extra,
    });
    runners.push(runner);
    await runner.start();
    return runner;
  }

  const items = (count: number, tag = uniqueId()) => Array.from({ length: count }, (_, seq) => ({ key: `${tag}-k${seq % 37}`, value: { key: `${tag}-k${seq % 37}`, seq } }));

  it('stores messages in writes of many rows, each message once, and counts them', async () => {
    const topic = await freshTopic(brokers, 'sink-rows');
    const metrics = new Registry();
    const writes: Row[][] = [];
    await run(topic, async (rows) => void writes.push(rows), { metrics, maxRows: 300 });
    const sent = items(1000);
    await producer.send(topic, sent);
    await waitFor(() => writes.flat().length >= sent.length, 30_000, 'all rows');
    const ids = writes.flat().map((r) => r.id);
    expect(new Set(ids).size).toBe(sent.length);
    expect(ids).toHaveLength(sent.length);
    expect(Math.max(...writes.map((w) => w.length))).toBeLessThanOrEqual(300);
    // Far fewer writes than messages: rows gather while a write runs.
    expect(writes.length).toBeLessThan(sent.length / 10);
    const processed = await metrics.getSingleMetric('meld_kafka_messages_processed_total')?.get();
    expect(processed?.values.find((v) => v.labels.topic === topic)?.value).toBe(sent.length);
  });

  it('dead-letters invalid messages and rows that cannot be built, and stores the rest', async () => {
    const topic = await freshTopic(brokers, 'sink-invalid');
    const stored: Row[] = [];
    const [dlq] = await Promise.all([
      collect(brokers, `${topic}.dlq`),
      run(
        topic,
        async (rows) => void stored.push(...rows),
        {},
        (v) => {
          if (v.seq === 3) throw new DeadLetterError('seq 3 is never storable');
          return v.seq === 4 ? undefined : rowOf(v);
        },
      ),
    ]);
    readers.push(dlq.stop);
    await rawSend(brokers, topic, [
      { key: 'same', value: 'this is not json' },
      { key: 'same', value: JSON.stringify({ key: 'same', seq: 'one' }) },
      { key: 'same', value: JSON.stringify({ key: 'same', seq: 2 }) },
      { key: 'same', value: JSON.stringify({ key: 'same', seq: 3 }) },
      { key: 'same', value: JSON.stringify({ key: 'same', seq: 4 }) },
    ]);
    await waitFor(() => stored.length >= 1 && dlq.messages.length >= 3, 30_000, 'rows and dead letters');
    expect(stored).toEqual([{ id: 'same/2' }]);
    const reasons = dlq.messages.map((m) => [headerString(m.headers, DlqHeaders.offset), headerString(m.headers, DlqHeaders.reason)]);
    expect(reasons).toEqual([
      ['0', 'invalid'],
      ['1', 'invalid'],
      ['3', 'rejected'],
    ]);
    expect(headerString(dlq.messages[2].headers, DlqHeaders.error)).toBe('DeadLetterError: seq 3 is never storable');
  });

  it('retries a failing write with the same rows, then dead-letters them once attempts run out', async () => {
    const topic = await freshTopic(brokers, 'sink-retry');
    const attempts: string[][] = [];
    const stored: Row[] = [];
    const [dlq] = await Promise.all([
      collect(brokers, `${topic}.dlq`),
      run(topic, async (rows) => {
        attempts.push(rows.map((r) => r.id));
        // The poison batch (seq 0) never works; the one after fails once, then works.
        if (rows.some((r) => r.id === 'p/0')) throw new Error('store rejects the batch');
        if (attempts.filter((a) => a.includes('p/1')).length === 1) throw new Error('store blip');
        stored.push(...rows);
      }),
    ]);
    readers.push(dlq.stop);
    await producer.send(topic, [{ key: 'p', value: { key: 'p', seq: 0 } }]);
    await waitFor(() => dlq.messages.length === 1, 30_000, 'dead-lettered batch');
    await producer.send(topic, [{ key: 'p', value: { key: 'p', seq: 1 } }]);
    await waitFor(() => stored.length === 1, 30_000, 'next batch stored after one retry');
    expect(attempts).toEqual([['p/0'], ['p/0'], ['p/0'], ['p/1'], ['p/1']]);
    expect(stored).toEqual([{ id: 'p/1' }]);
    const dead = dlq.messages[0];
    expect(JSON.parse(dead.value!.toString())).toEqual({ key: 'p', seq: 0 });
    expect(headerString(dead.headers, DlqHeaders.reason)).toBe('retries-exhausted');
    expect(headerString(dead.headers, DlqHeaders.attempts)).toBe('3');
    expect(headerString(dead.headers, DlqHeaders.error)).toBe('Error: store rejects the batch');
  });

  it('stops fetching while maxPendingRows wait for a stuck store, and goes on once it answers', async () => {
    const topic = await freshTopic(brokers, 'sink-backpressure');
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    let taken = 0;
    const stored: Row[] = [];
    await run(
      topic,
      async (rows) => {
        await stuck;
        stored.push(...rows);
      },
      { maxRows: 50, maxPendingRows: 100 },
      (v) => {
        taken++;
        return rowOf(v);
      },
    );
    const sent = items(2000);
    // Produce requests of 50: the development broker returns one request's records per partition and fetch.
    for (let i = 0; i < sent.length; i += 50) await producer.send(topic, sent.slice(i, i + 50));
    await waitFor(() => taken >= 100, 30_000, 'the pending limit reached');
    await new Promise((r) => setTimeout(r, 500));
    // The limit, plus what the batches in flight when it was reached held.
    expect(taken).toBeLessThan(600);
    release();
    await waitFor(() => stored.length >= sent.length, 60_000, 'everything stored after the store came back');
    expect(new Set(stored.map((r) => r.id)).size).toBe(sent.length);
  });

  it('writes only rows of partitions it owns: a rebalance holds the writer until the join, which drops what moved away', async () => {
    const topic = await freshTopic(brokers, 'sink-rebalance');
    const groupId = `test-sink-rebalance-${uniqueId()}`;
    // The development broker's rebalance waits a second less than the session for every member.
    const session = { sessionTimeoutMs: 6000, heartbeatIntervalMs: 500 };
    // Each message to a known partition, so a written row tells which partition it came from.
    const sent = Array.from({ length: 400 }, (_, seq) => ({ key: `k${seq}`, value: { key: `k${seq}`, seq }, partition: seq % 4 }));
    const partitionOf = (row: Row) => Number(row.id.slice(row.id.indexOf('/') + 1)) % 4;
    // The first member's partitions as the group last told it: none from a rebalance's start to its join.
    let owned = new Set<number>();
    let secondStarted = false;
    let storeUp = false;
    let kept: Set<number> | undefined;
    const strays: string[] = [];
    const written = new Set<string>();
    let taken = 0;
    const runner1 = await run(
      topic,
      async (rows) => {
        // The store is down until the group rebalances: the member queues all it takes meanwhile.
        if (!storeUp) throw Object.assign(new Error('store down'), { code: 'ECONNREFUSED' });
        strays.push(...rows.filter((r) => !owned.has(partitionOf(r))).map((r) => r.id));
        for (const r of rows) written.add(r.id);
      },
      { maxRows: 50, maxPendingRows: 10_000, ...session },
      (v) => {
        taken++;
        return rowOf(v);
      },
      groupId,
    );
    const { REBALANCING, GROUP_JOIN } = runner1.consumer.events;
    runner1.consumer.on(REBALANCING, () => {
      owned = new Set();
      storeUp ||= secondStarted;
    });
    // A member dropped from the group (a loaded machine missed the rebalance) joins again without REBALANCING.
    runner1.consumer.on(GROUP_JOIN, ({ payload }) => {
      owned = new Set(payload.memberAssignment[topic] ?? []);
      storeUp ||= secondStarted;
      if (secondStarted && owned.size < 4) kept ??= owned;
    });
    for (let i = 0; i < sent.length; i += 50) await producer.send(topic, sent.slice(i, i + 50));
    await waitFor(() => taken >= sent.length, 60_000, 'everything taken by the first member');

    // A second member joins: the first one's next heartbeat starts the rebalance.
    secondStarted = true;
    await run(topic, async () => undefined, session, rowOf, groupId);
    await waitFor(() => kept !== undefined, 90_000, 'the first member to lose partitions to the second');
    const keptIds = sent.filter((m) => kept!.has(m.partition)).map((m) => `${m.key}/${m.value.seq}`);
    await waitFor(() => keptIds.every((id) => written.has(id)), 60_000, 'the rows of the partitions it kept written');
    // Nothing was written while its partitions were revoked, nor, after the join, of those that moved.
    expect(strays).toEqual([]);
  }, 240_000);

  it('stops while its consumer is between a crash and kafkajs restarting it', async () => {
    const topic = await freshTopic(brokers, 'sink-stop-crashed');
    const runner = await run(topic, async () => undefined);
    // A crash (a lost session on a loaded machine) stops kafkajs's consumer and drops its group
    // until the restart timer fires; stop() in that window must still leave cleanly.
    await runner.consumer.stop();
    await expect(runner.stop()).resolves.toBeUndefined();
  });

  it('stores and commits what it took before stop() resolves, so a restart resumes after it', async () => {
    const topic = await freshTopic(brokers, 'sink-resume');
    const shortSession = { sessionTimeoutMs: 6000, heartbeatIntervalMs: 1000 };
    const groupId = `test-sink-resume-${uniqueId()}`;
    const sent = items(3000);
    for (let i = 0; i < sent.length; i += 100) await producer.send(topic, sent.slice(i, i + 100));
    const counts = new Map<string, number>();
    const write = (slowMs: number) => async (rows: Row[]) => {
      await new Promise((r) => setTimeout(r, slowMs));
      for (const r of rows) counts.set(r.id, (counts.get(r.id) ?? 0) + 1);
    };
    let taken = 0;
    const runner1 = await run(
      topic,
      write(200),
      { maxRows: 100, ...shortSession },
      (v) => {
        taken++;
        return rowOf(v);
      },
      groupId,
    );
    await waitFor(() => counts.size >= 200, 30_000, 'first consumer to get going');
    await runner1.stop();
    // Everything taken was written before stop() resolved (200 ms writes, well within its timeout).
    expect(counts.size).toBe(taken);
    expect(taken).toBeLessThan(sent.length);

    await run(topic, write(0), shortSession, rowOf, groupId);
    await waitFor(() => counts.size >= sent.length, 60_000, 'every message stored');
    const duplicates = [...counts.values()].reduce((n, c) => n + c - 1, 0);
    expect(counts.size).toBe(sent.length);
    // The first consumer committed what it stored: the second starts right after it.
    expect(duplicates).toBe(0);
  });
});
