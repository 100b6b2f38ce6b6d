import type { ClickHouse } from '@meld/clickhouse';
import type Redis from 'ioredis';
import type { DataSource } from 'typeorm';
import { ProbeClock } from '../shared/probe-clock';
import { RETENTION_INTERVAL_MS, RetentionPruner, retentionEveryMs } from './retention.pruner';

const MINUTE = 60_000;

/** The lock's SET NX PX, on the (fake) clock. */
class FakeLock {
  private until = 0;
  async set(_key: string, _value: string, _px: 'PX', ms: number, _nx: 'NX'): Promise<'OK' | null> {
    if (Date.now() < this.until) return null;
    this.until = Date.now() + ms;
    return 'OK';
  }
}

/** When retention runs (ADR 0168): about hourly across the fleet, whatever the pods' lifetimes. */
describe('retention schedule', () => {
  const saved = process.env.MELD_PROBES_RETENTION_EVERY_MS;
  let lock: FakeLock;
  let runs: number;

  beforeEach(() => {
    jest.useFakeTimers();
    lock = new FakeLock();
    runs = 0;
  });

  afterEach(() => {
    jest.useRealTimers();
    if (saved === undefined) delete process.env.MELD_PROBES_RETENTION_EVERY_MS;
    else process.env.MELD_PROBES_RETENTION_EVERY_MS = saved;
  });

  const pod = (): RetentionPruner => {
    const pruner = new RetentionPruner({} as DataSource, {} as ClickHouse, lock as unknown as Redis, new ProbeClock());
    jest.spyOn(pruner, 'run').mockImplementation(async () => {
      runs += 1;
      return { projects: 0, mutations: 0, events: 0 };
    });
    return pruner;
  };

  /** Pods started `count` times one after another, each living `lifeMs`, `replicas` at a time. */
  const live = async (count: number, lifeMs: number, replicas = 1) => {
    for (let i = 0; i < count; i += 1) {
      const pods = Array.from({ length: replicas }, pod);
      for (const p of pods) p.onApplicationBootstrap();
      await jest.advanceTimersByTimeAsync(lifeMs);
      for (const p of pods) p.beforeApplicationShutdown();
    }
  };

  it('runs about hourly when pods live 30 minutes each (restarts, rollouts, scale-in)', async () => {
    delete process.env.MELD_PROBES_RETENTION_EVERY_MS;
    // 6 hours; runs 59-66 min apart (the lock, then the next try, 7 min at most across a restart).
    await live(12, 30 * MINUTE);
    expect(runs).toBeGreaterThanOrEqual(6);
    expect(runs).toBeLessThanOrEqual(7);
  });

  it('runs once an hour, not once per replica, with three long-lived replicas', async () => {
    delete process.env.MELD_PROBES_RETENTION_EVERY_MS;
    // Runs at 1-2 min, then at most 59-64 min apart (the lock, then the next replica's try): three in 2 h 50 min.
    await live(1, 3 * RETENTION_INTERVAL_MS - 10 * MINUTE, 3);
    expect(runs).toBe(3);
  });

  it('does not run with MELD_PROBES_RETENTION_EVERY_MS=0 (tests share old events)', async () => {
    process.env.MELD_PROBES_RETENTION_EVERY_MS = '0';
    await live(1, 3 * RETENTION_INTERVAL_MS, 2);
    expect(runs).toBe(0);
  });

  it('reads MELD_PROBES_RETENTION_EVERY_MS: 5 minutes by default, 0 off, a bad value named', () => {
    expect(retentionEveryMs({})).toBe(5 * MINUTE);
    expect(retentionEveryMs({ MELD_PROBES_RETENTION_EVERY_MS: '0' })).toBe(0);
    expect(retentionEveryMs({ MELD_PROBES_RETENTION_EVERY_MS: '120000' })).toBe(2 * MINUTE);
    for (const bad of ['5', 'soon', String(2 * RETENTION_INTERVAL_MS)]) {
      expect(() => retentionEveryMs({ MELD_PROBES_RETENTION_EVERY_MS: bad })).toThrow(/MELD_PROBES_RETENTION_EVERY_MS/);
    }
  });
});
