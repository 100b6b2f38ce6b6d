import fc from 'fast-check';
import { z } from 'zod';
import { processBatch, type BatchControl, type ProcessOptions, type RawMessage, type TopicHandler } from './batch-processor';
import type { DeadLetterRecord } from './dead-letter';
import { DeadLetterError, Outcome, RetriableError } from './outcome';
import { Ticker } from './ticker';

const schema = z.object({ n: z.number() });
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

function batchOf(keys: Array<string | null>, values?: Array<string | null>): RawMessage[] {
  return keys.map((key, i) => ({
    offset: String(100 + i),
    key: key === null ? null : Buffer.from(key),
    value: values ? (values[i] === null ? null : Buffer.from(values[i] as string)) : Buffer.from(JSON.stringify({ n: i })),
    headers: { 'schema-version': Buffer.from('1') },
    timestamp: '0',
  }));
}

function fakeControl(overrides: Partial<BatchControl> = {}): BatchControl & { resolved: string[] } {
  const resolved: string[] = [];
  return {
    resolved,
    resolveOffset: (o) => resolved.push(o),
    heartbeat: async () => undefined,
    isStale: () => false,
    ...overrides,
  };
}

function options(overrides: Partial<ProcessOptions> = {}): ProcessOptions & { dead: Array<{ topic: string; record: DeadLetterRecord }>; sleeps: number[] } {
  const dead: Array<{ topic: string; record: DeadLetterRecord }> = [];
  const sleeps: number[] = [];
  return {
    dead,
    sleeps,
    group: 'g',
    concurrency: 4,
    backoff: { maxAttempts: 3, initialDelayMs: 10, maxDelayMs: 100 },
    heartbeatIntervalMs: 60_000,
    deadLetterTopic: 't.dlq',
    sink: {
      send: async (topic, records) => {
        for (const record of records) dead.push({ topic, record });
      },
    },
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...overrides,
  };
}

function handlerOf(handle: TopicHandler<{ n: number }>['handle']): TopicHandler<{ n: number }> {
  return { topic: 't', schema, handle };
}

describe('processBatch', () => {
  it('keeps per-key order, bounds concurrency and resolves only completed prefixes (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.option(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), { nil: null, freq: 8 }), { minLength: 1, maxLength: 60 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 60, maxLength: 60 }),
        fc.integer({ min: 1, max: 8 }),
        async (keys, delays, concurrency) => {
          const messages = batchOf(keys);
          const completed = new Set<number>();
          const inFlightKeys = new Set<string>();
          const orderByKey = new Map<string, number[]>();
          let running = 0;
          let peak = 0;
          const control = fakeControl({
            resolveOffset: (o) => {
              // Every message up to a resolved offset must be finished.
              for (let i = 0; i <= Number(o) - 100; i++) expect(completed.has(i)).toBe(true);
              control.resolved.push(o);
            },
          });
          const result = await processBatch(
            { topic: 't', partition: 0, messages },
            handlerOf(async (m) => {
              const i = m.value.n;
              if (m.key !== null) {
                expect(inFlightKeys.has(m.key)).toBe(false);
                inFlightKeys.add(m.key);
                orderByKey.set(m.key, [...(orderByKey.get(m.key) ?? []), i]);
              }
              running++;
              peak = Math.max(peak, running);
              for (let k = 0; k < delays[i]; k++) await tick();
              running--;
              completed.add(i);
              if (m.key !== null) inFlightKeys.delete(m.key);
            }),
            control,
            options({ concurrency }),
          );
          expect(result.processed).toBe(keys.length);
          expect(completed.size).toBe(keys.length);
          expect(peak).toBeLessThanOrEqual(concurrency);
          for (const order of orderByKey.values()) expect(order).toEqual([...order].sort((x, y) => x - y));
          expect(control.resolved.at(-1)).toBe(String(100 + keys.length - 1));
          const resolvedNums = control.resolved.map(Number);
          expect(resolvedNums).toEqual([...resolvedNums].sort((x, y) => x - y));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('runs different keys concurrently', async () => {
    let running = 0;
    let peak = 0;
    await processBatch(
      { topic: 't', partition: 0, messages: batchOf(['a', 'b', 'c', 'd']) },
      handlerOf(async () => {
        running++;
        peak = Math.max(peak, running);
        await tick();
        running--;
      }),
      fakeControl(),
      options({ concurrency: 4 }),
    );
    expect(peak).toBe(4);
  });

  it('dead-letters invalid messages with the error and never hands them to the handler', async () => {
    const seen: number[] = [];
    const opts = options();
    const control = fakeControl();
    const result = await processBatch(
      { topic: 't', partition: 3, messages: batchOf(['a', 'a', 'b'], ['{"n":0}', 'not json', '{"n":"two"}']) },
      handlerOf((m) => {
        seen.push(m.value.n);
      }),
      control,
      opts,
    );
    expect(seen).toEqual([0]);
    expect(result.deadLettered.invalid).toBe(2);
    expect(opts.dead.map((d) => [d.topic, d.record.offset, d.record.reason, d.record.partition])).toEqual([
      ['t.dlq', '101', 'invalid', 3],
      ['t.dlq', '102', 'invalid', 3],
    ]);
    expect(opts.dead[0].record.error).toMatch(/not JSON/);
    expect(opts.dead[1].record.error).toMatch(/n: /);
    expect(opts.dead[0].record.value?.toString()).toBe('not json');
    expect(control.resolved.at(-1)).toBe('102');
  });

  it('retries a retriable failure with jittered backoff and processes the message once', async () => {
    const attempts: number[] = [];
    const opts = options({ random: () => 0.5 });
    const result = await processBatch(
      { topic: 't', partition: 0, messages: batchOf(['a']) },
      handlerOf((m) => {
        attempts.push(m.attempt);
        if (m.attempt < 3) throw new RetriableError('store down');
      }),
      fakeControl(),
      opts,
    );
    expect(attempts).toEqual([1, 2, 3]);
    expect(opts.sleeps).toEqual([5, 10]);
    expect(result).toMatchObject({ processed: 1, failedAttempts: 2, deadLettered: { 'retries-exhausted': 0 } });
  });

  it('dead-letters after the last attempt and moves on to the next message of the key', async () => {
    const seen: string[] = [];
    const opts = options();
    const control = fakeControl();
    const result = await processBatch(
      { topic: 't', partition: 0, messages: batchOf(['a', 'a']) },
      handlerOf((m) => {
        seen.push(`${m.offset}#${m.attempt}`);
        if (m.offset === '100') return Outcome.retry('still down');
      }),
      control,
      opts,
    );
    expect(seen).toEqual(['100#1', '100#2', '100#3', '101#1']);
    expect(opts.dead).toHaveLength(1);
    expect(opts.dead[0].record).toMatchObject({ offset: '100', reason: 'retries-exhausted', attempts: 3, error: 'Error: still down' });
    expect(result.processed).toBe(1);
    expect(control.resolved.at(-1)).toBe('101');
  });

  it('dead-letters a DeadLetterError at once, without retrying', async () => {
    const opts = options();
    let calls = 0;
    await processBatch(
      { topic: 't', partition: 0, messages: batchOf(['a']) },
      handlerOf(() => {
        calls++;
        throw new DeadLetterError('contact belongs to no project');
      }),
      fakeControl(),
      opts,
    );
    expect(calls).toBe(1);
    expect(opts.dead[0].record).toMatchObject({ reason: 'rejected', attempts: 1, error: 'DeadLetterError: contact belongs to no project' });
  });

  it('logs a dead-lettered message by its offset, not its key (a user id: a phone or an email) nor a JSON text (ADR 0338)', async () => {
    const logged: string[] = [];
    const logger = { debug: () => undefined, info: () => undefined, error: () => undefined, warn: (obj: object, msg?: string) => void logged.push(JSON.stringify([obj, msg])) };
    const opts = options({ logger });
    await processBatch(
      { topic: 't', partition: 0, messages: [...batchOf(['p/ds/+33612345678']), ...batchOf(['p/ds/jane@x.com'], ['{"email": jane@x.com}'])] },
      handlerOf(() => {
        throw new DeadLetterError('contact belongs to no project');
      }),
      fakeControl(),
      opts,
    );
    expect(opts.dead).toHaveLength(2);
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.join('\n')).not.toMatch(/33612345678|jane/);
  });

  it('stops taking new keys soon after the batch turns stale and resolves nothing', async () => {
    let stale = false;
    const seen: string[] = [];
    const control = fakeControl({ isStale: () => stale });
    const keys = [...Array(300).keys()].map((k) => `k${k}`);
    const result = await processBatch(
      { topic: 't', partition: 0, messages: batchOf(keys) },
      handlerOf((m) => {
        seen.push(m.key as string);
        stale = true;
      }),
      control,
      options({ concurrency: 1 }),
    );
    // isStale() is polled every 64 synchronous messages (it is costly in kafkajs).
    expect(seen.length).toBeGreaterThanOrEqual(1);
    expect(seen.length).toBeLessThanOrEqual(64);
    expect(result.aborted).toBe('stale');
    expect(control.resolved).toEqual([]);
  });

  it('checks staleness after every await of an asynchronous handler', async () => {
    let stale = false;
    const seen: string[] = [];
    await processBatch(
      { topic: 't', partition: 0, messages: batchOf(['a', 'a', 'a', 'a']) },
      handlerOf(async (m) => {
        seen.push(m.offset);
        await tick();
        stale = true;
      }),
      fakeControl({ isStale: () => stale }),
      options({ concurrency: 1 }),
    );
    expect(seen).toEqual(['100']);
  });

  it('runs synchronous handlers without yielding per message, asynchronous ones bounded', async () => {
    const order: string[] = [];
    let running = 0;
    let peak = 0;
    await processBatch(
      { topic: 't', partition: 0, messages: batchOf(['a', 'b', 'c', 'd', 'e', 'f']) },
      handlerOf((m) => {
        order.push(m.key as string);
        if (m.key === 'b' || m.key === 'e') {
          running++;
          peak = Math.max(peak, running);
          return tick().then(() => {
            running--;
          });
        }
        return undefined;
      }),
      fakeControl(),
      options({ concurrency: 2 }),
    );
    expect(order.sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(peak).toBeLessThanOrEqual(2);
  });

  it('when a dead letter cannot be written, resolves only what precedes it and throws', async () => {
    const control = fakeControl();
    const opts = options({
      concurrency: 1,
      sink: {
        send: async () => {
          throw new Error('dlq topic missing');
        },
      },
    });
    await expect(
      processBatch(
        { topic: 't', partition: 0, messages: batchOf(['a', 'b', 'c']) },
        handlerOf((m) => (m.key === 'b' ? Outcome.deadLetter('bad') : undefined)),
        control,
        opts,
      ),
    ).rejects.toThrow('dlq topic missing');
    expect(control.resolved).toEqual(['100']);
  });

  it('heartbeats during a long batch, publishes progress, and gives up when the group is lost', async () => {
    let beats = 0;
    const control = fakeControl({
      heartbeat: async () => {
        beats++;
        if (beats >= 2) throw new Error('The group is rebalancing');
      },
    });
    const seen: string[] = [];
    await expect(
      processBatch(
        { topic: 't', partition: 0, messages: batchOf(['a', 'a', 'a', 'a', 'a', 'a']) },
        handlerOf(async (m) => {
          seen.push(m.offset);
          await new Promise((r) => setTimeout(r, 15));
        }),
        control,
        options({ heartbeatIntervalMs: 10 }),
      ),
    ).rejects.toThrow('rebalancing');
    expect(beats).toBeGreaterThanOrEqual(2);
    expect(seen.length).toBeLessThan(6);
    // Whatever finished before the group was lost is resolved, nothing past it.
    expect(control.resolved.at(-1)).toBe(seen.at(-1));
  });

  it('heartbeats through a shared ticker and unregisters when the batch ends', async () => {
    const ticker = new Ticker(5);
    let beats = 0;
    await processBatch(
      { topic: 't', partition: 0, messages: batchOf(['a', 'a', 'a']) },
      handlerOf(() => new Promise((r) => setTimeout(r, 10))),
      fakeControl({ heartbeat: async () => void beats++ }),
      options({ ticker }),
    );
    const afterBatch = beats;
    expect(afterBatch).toBeGreaterThanOrEqual(2);
    await new Promise((r) => setTimeout(r, 30));
    expect(beats).toBe(afterBatch);
    ticker.close();
  });

  it('passes key, schema version and headers to the handler', async () => {
    const got: unknown[] = [];
    await processBatch(
      { topic: 't', partition: 2, messages: batchOf(['k']) },
      handlerOf((m) => {
        got.push({ key: m.key, v: m.schemaVersion, topic: m.topic, partition: m.partition, attempt: m.attempt });
      }),
      fakeControl(),
      options(),
    );
    expect(got).toEqual([{ key: 'k', v: 1, topic: 't', partition: 2, attempt: 1 }]);
  });
});
