import type { TopicName } from '@meld/contracts';
import type { Kafka, Message, ProducerBatch, ProducerRecord } from 'kafkajs';
import { Registry } from 'prom-client';
import { z } from 'zod';
import { createProducer } from './producer';
import { unpublishableReason } from './unpublishable';

/** What the producer asked kafkajs for: one entry per produce request. */
type Request = Array<{ topic: string; values: string[] }>;

/**
 * A stand-in for kafkajs's client: each request stays in flight until the test releases it,
 * and a request naming the topic `bad` fails (as a missing topic does on real Kafka).
 */
function fakeKafka() {
  const requests: Request[] = [];
  const pending: Array<() => void> = [];
  const values = (messages: Message[]) => messages.map((m) => String(m.value));
  const request = (r: Request) =>
    new Promise<void>((resolve, reject) => {
      requests.push(r);
      pending.push(() => (r.some((t) => t.topic === 'bad') ? reject(new Error('unknown topic bad')) : resolve()));
    });
  const kafka = {
    producer: () => ({
      connect: async () => undefined,
      disconnect: async () => undefined,
      send: (record: ProducerRecord) => request([{ topic: record.topic, values: values(record.messages) }]),
      sendBatch: (batch: ProducerBatch) => request((batch.topicMessages ?? []).map((t) => ({ topic: t.topic, values: values(t.messages) }))),
    }),
  } as unknown as Kafka;
  /** Lets the oldest request in flight finish; resolves once the producer reacted. */
  const release = async () => {
    pending.shift()?.();
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };
  return { kafka, requests, release };
}

const msg = (value: string) => ({ key: 'k', value });

/** Releases requests one at a time until `done` settles (at most 20). */
async function releaseUntil(done: Promise<unknown>, release: () => Promise<void>): Promise<void> {
  let settled = false;
  void done.finally(() => (settled = true)).catch(() => undefined);
  for (let i = 0; i < 20 && !settled; i++) await release();
}

describe('producer grouping', () => {
  it('sends what queued behind the request in flight as one request, in call order', async () => {
    const { kafka, requests, release } = fakeKafka();
    const producer = createProducer({ brokers: 'x:1', clientId: 't', kafka, metrics: new Registry() });
    const done: string[] = [];
    const send = (v: string) => producer.send('t1', [msg(v)]).then(() => done.push(v));
    const sends = [send('a')];
    await new Promise((r) => setImmediate(r));
    sends.push(...['b', 'c', 'd'].map(send));
    await new Promise((r) => setImmediate(r));
    expect(requests).toEqual([[{ topic: 't1', values: ['"a"'] }]]);
    await release();
    expect(done).toEqual(['a']);
    expect(requests[1]).toEqual([{ topic: 't1', values: ['"b"', '"c"', '"d"'] }]);
    await release();
    await Promise.all(sends);
    expect(done).toEqual(['a', 'b', 'c', 'd']);
  });

  it('sends made together share one request, whatever their topics (an outbox pass, ADR 0278)', async () => {
    const { kafka, requests, release } = fakeKafka();
    const producer = createProducer({ brokers: 'x:1', clientId: 't', kafka, metrics: new Registry() });
    const sends = [producer.send('t1', [msg('a'), msg('c')]), producer.send('t2', [msg('b')])];
    await releaseUntil(Promise.all(sends), release);
    expect(requests).toEqual([
      [
        { topic: 't1', values: ['"a"', '"c"'] },
        { topic: 't2', values: ['"b"'] },
      ],
    ]);
  });

  it('fails the sends, never leaves them waiting, when the producer cannot connect', async () => {
    let attempts = 0;
    const kafka = {
      producer: () => ({
        connect: async () => {
          attempts++;
          throw new Error('broker down');
        },
        disconnect: async () => undefined,
      }),
    } as unknown as Kafka;
    const producer = createProducer({ brokers: 'x:1', clientId: 't', kafka, metrics: new Registry() });
    const outcome = await Promise.race([producer.send('t1', [msg('a')]).then(() => 'sent', (err: Error) => err.message), new Promise((r) => setTimeout(() => r('still waiting'), 500))]);
    expect(outcome).toBe('broker down');
    expect(attempts).toBeGreaterThanOrEqual(1);
  });

  it('an idle producer lingers lingerMs for company: sends within it share one request; a busy one does not wait', async () => {
    const { kafka, requests, release } = fakeKafka();
    // The linger runs on the test's clock: real sleeps of 10 and 60 ms around a 40 ms linger
    // failed whenever a loaded machine held the process past the linger between them.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
    try {
      const producer = createProducer({ brokers: 'x:1', clientId: 't', kafka, metrics: new Registry(), lingerMs: 40 });
      const first = producer.send('t1', [msg('a')]);
      await jest.advanceTimersByTimeAsync(39);
      expect(requests).toEqual([]);
      const second = producer.send('t1', [msg('b')]);
      await jest.advanceTimersByTimeAsync(1);
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      expect(requests).toEqual([[{ topic: 't1', values: ['"a"', '"b"'] }]]);
      // Queued behind a request in flight: sent as soon as it returns, no linger.
      const third = producer.send('t1', [msg('c')]);
      await release();
      expect(requests[1]).toEqual([{ topic: 't1', values: ['"c"'] }]);
      await release();
      await Promise.all([first, second, third]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('groups by topic and keeps each group within maxBatchSize messages', async () => {
    const { kafka, requests, release } = fakeKafka();
    const producer = createProducer({ brokers: 'x:1', clientId: 't', kafka, metrics: new Registry(), maxBatchSize: 3 });
    const first = producer.send('t1', [msg('a')]);
    await new Promise((r) => setImmediate(r));
    const sends = [
      first,
      producer.send('t1', [msg('b')]),
      producer.send('t2', [msg('c')]),
      producer.send('t1', [msg('d'), msg('e')]),
      producer.send('t1', [msg('f'), msg('g'), msg('h'), msg('i')]),
    ];
    await releaseUntil(Promise.all(sends), release);
    expect(requests).toEqual([
      [{ topic: 't1', values: ['"a"'] }],
      [
        { topic: 't1', values: ['"b"'] },
        { topic: 't2', values: ['"c"'] },
      ],
      [{ topic: 't1', values: ['"d"', '"e"'] }],
      // Bigger than maxBatchSize: alone, in chunks.
      [{ topic: 't1', values: ['"f"', '"g"', '"h"'] }],
      [{ topic: 't1', values: ['"i"'] }],
    ]);
  });

  it('keeps each request within maxBatchBytes: groups stop short of it, a bigger send goes in chunks, a message larger than it alone (ADR 0346)', async () => {
    const { kafka, requests, release } = fakeKafka();
    // Each message: key 'k' (1) + value `"xx…"` + headers (schema-version 1, at 3 bytes a character: 45) + 24 of overhead.
    const producer = createProducer({ brokers: 'x:1', clientId: 't', kafka, metrics: new Registry(), maxBatchBytes: 250 });
    const v = (c: string, n: number) => msg(c.repeat(n));
    const first = producer.send('t1', [v('a', 8)]);
    await new Promise((r) => setImmediate(r));
    const sends = [
      first,
      producer.send('t1', [v('b', 60)]), // 132 bytes
      producer.send('t1', [v('c', 60)]), // would make 264: the next request
      producer.send('t1', [v('d', 40), v('e', 40), v('f', 40)]), // 3 × 112: alone, in chunks
      producer.send('t1', [v('g', 400)]), // larger than the bound: alone
    ];
    await releaseUntil(Promise.all(sends), release);
    const firstChars = requests.map((r) => r.flatMap((t) => t.values.map((x) => x[1])).join(''));
    expect(firstChars).toEqual(['a', 'b', 'c', 'de', 'f', 'g']);
  });

  it('fails only the call that cannot succeed: a failed group is sent again call by call', async () => {
    const { kafka, requests, release } = fakeKafka();
    const producer = createProducer({ brokers: 'x:1', clientId: 't', kafka, metrics: new Registry() });
    const first = producer.send('t1', [msg('a')]);
    await new Promise((r) => setImmediate(r));
    const results = Promise.allSettled([producer.send('t1', [msg('b')]), producer.send('bad', [msg('x')]), producer.send('t1', [msg('c')])]);
    await releaseUntil(Promise.all([first, results]), release);
    await first;
    expect((await results).map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(requests.slice(2).map((r) => r.map((t) => t.topic))).toEqual([['t1'], ['bad'], ['t1']]);
  });
});

describe('publish through a typed output', () => {
  const output = { topic: 'meld.things.v1' as TopicName, schema: z.object({ projectId: z.string(), thingId: z.string() }), key: (v: { projectId: string; thingId: string }) => `${v.projectId}/${v.thingId}` };

  function recordingKafka() {
    const sent: ProducerRecord[] = [];
    const kafka = {
      producer: () => ({
        connect: async () => undefined,
        disconnect: async () => undefined,
        send: async (record: ProducerRecord) => void sent.push(record),
      }),
    } as unknown as Kafka;
    return { kafka, sent };
  }

  it("sends to the output's topic, keyed by the output's key", async () => {
    const { kafka, sent } = recordingKafka();
    const producer = createProducer({ kafka, brokers: 'unused:9092', clientId: 'spec', metrics: new Registry() });
    await producer.publish(output, [{ projectId: 'p1', thingId: 't1' }]);
    expect(sent).toHaveLength(1);
    expect(sent[0].topic).toBe('meld.things.v1');
    expect(sent[0].messages.map((m) => m.key)).toEqual(['p1/t1']);
  });

  it("refuses a value that does not match the output's schema, sending nothing", async () => {
    const { kafka, sent } = recordingKafka();
    const producer = createProducer({ kafka, brokers: 'unused:9092', clientId: 'spec', metrics: new Registry() });
    await expect(producer.publish(output, [{ projectId: 'p1' } as never])).rejects.toThrow('message 0 for meld.things.v1 does not match its schema');
    expect(sent).toHaveLength(0);
  });

  it('refuses a value that does not match its schema or is not JSON as unpublishable: an outbox relay sets its row aside (ADR 0346)', async () => {
    const { kafka } = recordingKafka();
    const producer = createProducer({ kafka, brokers: 'unused:9092', clientId: 'spec', metrics: new Registry() });
    const schema = await producer.publish(output, [{ projectId: 'p1' } as never]).catch((e: unknown) => e);
    expect(unpublishableReason(schema)).toBe('schema');
    const notJson = await producer.send('t1', [{ key: 'k', value: undefined }]).catch((e: unknown) => e);
    expect(unpublishableReason(notJson)).toBe('not_json');
  });
});
