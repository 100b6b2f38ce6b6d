import { z } from 'zod';
import { processBatch, type BatchControl, type ProcessOptions, type RawMessage } from './batch-processor';
import type { DeadLetterRecord } from './dead-letter';

/** Transient store errors pause the batch and retry without bound (ADR 0111). */
const schema = z.object({ n: z.number() });

function batchOf(keys: string[]): RawMessage[] {
  return keys.map((key, i) => ({ offset: String(100 + i), key: Buffer.from(key), value: Buffer.from(JSON.stringify({ n: i })), timestamp: '0' }));
}

function control(): BatchControl & { resolved: string[] } {
  const resolved: string[] = [];
  return { resolved, resolveOffset: (o) => resolved.push(o), heartbeat: async () => undefined, isStale: () => false };
}

function refused(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:55432'), { code: 'ECONNREFUSED' });
}

function options(onSleep: (ms: number) => void, overrides: Partial<ProcessOptions> = {}) {
  const dead: DeadLetterRecord[] = [];
  const pauses: boolean[] = [];
  const opts: ProcessOptions = {
    group: 'g',
    concurrency: 8,
    backoff: { maxAttempts: 3, initialDelayMs: 100, maxDelayMs: 1000 },
    heartbeatIntervalMs: 60_000,
    deadLetterTopic: 't.dlq',
    sink: { send: async (_t, records) => void dead.push(...records) },
    sleep: async (ms) => onSleep(ms),
    random: () => 0.5,
    onPause: (p) => pauses.push(p),
    ...overrides,
  };
  return { opts, dead, pauses };
}

describe('processBatch while the store is down', () => {
  it('retries far beyond maxAttempts with capped backoff, dead-letters nothing and loses nothing', async () => {
    let down = true;
    const sleeps: number[] = [];
    const { opts, dead, pauses } = options((ms) => {
      sleeps.push(ms);
      if (sleeps.length === 40) down = false;
    });
    const done: string[] = [];
    const c = control();
    const result = await processBatch(
      { topic: 't', partition: 0, messages: batchOf(['a', 'b', 'a', 'c']) },
      { topic: 't', schema, handle: async (m) => {
        if (down) throw refused();
        done.push(m.offset);
      } },
      c,
      opts,
    );
    expect(dead).toEqual([]);
    expect(done.sort()).toEqual(['100', '101', '102', '103']);
    expect(result).toMatchObject({ processed: 4, aborted: false, deadLettered: { 'retries-exhausted': 0, rejected: 0 } });
    expect(c.resolved.at(-1)).toBe('103');
    // Capped exponential with equal jitter: 75, 150, 300, 600, then 750 (half of 1000 + half of half).
    expect(sleeps.slice(0, 6)).toEqual([75, 150, 300, 600, 750, 750]);
    expect(pauses).toEqual([true, false]);
  });

  it('probes with one message while paused: the others wait instead of hammering the store', async () => {
    let down = true;
    let sleeps = 0;
    let callsWhileDown = 0;
    const { opts } = options(() => {
      if (++sleeps === 20) down = false;
    });
    const keys = Array.from({ length: 8 }, (_, i) => `k${i}`);
    await processBatch(
      { topic: 't', partition: 0, messages: batchOf(keys) },
      { topic: 't', schema, handle: async () => {
        if (down) {
          callsWhileDown++;
          throw refused();
        }
      } },
      control(),
      opts,
    );
    // Each key in flight fails once, then only the probe retries: one call per backoff sleep.
    expect(callsWhileDown).toBeLessThanOrEqual(keys.length + sleeps);
  });

  it('keeps the bounded path for a message that is itself bad', async () => {
    const { opts, dead } = options(() => undefined);
    await processBatch(
      { topic: 't', partition: 0, messages: batchOf(['a']) },
      { topic: 't', schema, handle: async () => {
        throw Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
      } },
      control(),
      opts,
    );
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ reason: 'retries-exhausted', attempts: 3 });
  });

  it('gives up when the runner stops: nothing resolved past the paused message, nothing dead-lettered', async () => {
    let stopping = false;
    let sleeps = 0;
    const { opts, dead } = options(() => {
      if (++sleeps === 5) stopping = true;
    }, { stopping: () => stopping, concurrency: 1 });
    const c = control();
    const result = await processBatch(
      { topic: 't', partition: 0, messages: batchOf(['a', 'b']) },
      { topic: 't', schema, handle: async (m) => {
        if (m.offset === '100') throw refused();
      } },
      c,
      opts,
    );
    expect(result.aborted).toBe('stopping');
    expect(dead).toEqual([]);
    expect(c.resolved).toEqual([]);
  });
});
