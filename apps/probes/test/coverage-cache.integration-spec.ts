import { randomUUID } from 'node:crypto';
import type { ClickHouse } from '@meld/clickhouse';
import { seedTenancy, type Json } from '@meld/fixtures';
import { TcpProxy, testEnv } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { CoverageUseCase } from '../src/coverage/coverage.usecase';
import { REFRESH_INTERVAL_MS } from '../src/shared/probe-cache';
import { ProbeClock } from '../src/shared/probe-clock';
import { insertContacts, probeHeaders, startProbes } from './probes.fixture';

/**
 * The coverage cache and refresh throttle in Redis (probe rules 2 and 3, ADR 0165), with a
 * controllable clock; ClickHouse through a TcpProxy the tests cut to make a recomputation fail.
 */
describe('audience coverage cache and refresh throttle', () => {
  const env = testEnv();
  let proxy: TcpProxy;
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let ch: ClickHouse;
  let clock: ProbeClock;
  let t: Awaited<ReturnType<typeof seedTenancy>>;

  beforeAll(async () => {
    proxy = await TcpProxy.start(env.clickhouseUrl);
    ({ app, base, db, ch } = await startProbes({ MELD_CLICKHOUSE_URL: proxy.via(env.clickhouseUrl).replace(/\/$/, '') }));
    clock = app.get(ProbeClock);
    // Frozen between moves, so the ages asserted are the moves alone, however long the calls and
    // the inserts (two tables since ADR 0223) take on a loaded machine.
    let frozenAt = Date.now();
    jest.spyOn(clock, 'now').mockImplementation(() => frozenAt);
    jest.spyOn(clock, 'advance').mockImplementation((ms) => void (frozenAt += ms));
    t = await seedTenancy(db, 'coverage-cache');
    await insertContacts(ch, db, t.project.id, [[randomUUID(), { str: { loyalty_tier: 'gold' } }]]);
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
    await proxy?.stop();
  });

  const call = (body: unknown) => fetch(`${base}/v1/project/${t.project.uid}/audience/coverage`, { method: 'POST', headers: probeHeaders(t), body: JSON.stringify(body) });
  const coverage = async (body: unknown) => {
    const res = await call(body);
    expect(res.status).toBe(200);
    return ((await res.json()) as Json).metadata;
  };
  const addContact = () => insertContacts(ch, db, t.project.id, [[randomUUID(), { str: { loyalty_tier: 'silver' } }]]);

  it('caches an unfiltered profile and reports its age; refresh recomputes at most once per five minutes', async () => {
    const body = { attributes: ['loyalty_tier'] };
    const first = await coverage(body);
    expect(first).toMatchObject({ cached: false, computedAgo: 0, denominator: { count: 1 } });
    await addContact();
    clock.advance(90_000);
    const second = await coverage(body);
    expect(second).toMatchObject({ cached: true, computedAgo: 90, denominator: { count: 1 }, computedAt: first.computedAt });
    expect(second.refreshDeclined).toBeUndefined();

    const refreshed = await coverage({ ...body, refresh: true });
    expect(refreshed).toMatchObject({ cached: false, computedAgo: 0, denominator: { count: 2 } });
    await addContact();
    clock.advance(60_000);
    const declined = await coverage({ ...body, refresh: true });
    expect(declined).toMatchObject({ cached: true, computedAgo: 60, refreshDeclined: true, nextRefreshIn: 240, denominator: { count: 2 } });
    // The throttle is per project and surface, whatever the arguments.
    expect(await coverage({ attributes: ['_country'], refresh: true })).toMatchObject({ cached: false });
    expect(await coverage({ ...body, refresh: true })).toMatchObject({ refreshDeclined: true });
    clock.advance(240_000);
    expect(await coverage({ ...body, refresh: true })).toMatchObject({ cached: false, denominator: { count: 3 } });
  });

  it('throttles per project and surface: a spent coverage refresh leaves event volumes and other projects free (rule 2)', async () => {
    const other = await seedTenancy(db, 'coverage-cache-other');
    await insertContacts(ch, db, other.project.id, [[randomUUID(), { str: { loyalty_tier: 'gold' } }]]);
    const probe = async (tenancy: typeof t, surface: 'audience/coverage' | 'event/volumes', body: object) => {
      const res = await fetch(`${base}/v1/project/${tenancy.project.uid}/${surface}`, { method: 'POST', headers: probeHeaders(tenancy, { surface }), body: JSON.stringify(body) });
      expect(res.status).toBe(200);
      return ((await res.json()) as Json).metadata;
    };
    const body = { attributes: ['_timezone'] };
    for (const [tenancy, surface, args] of [[t, 'audience/coverage', body], [t, 'event/volumes', {}], [other, 'audience/coverage', body]] as const) await probe(tenancy, surface, args);
    clock.advance(REFRESH_INTERVAL_MS);
    expect(await probe(t, 'audience/coverage', { ...body, refresh: true })).toMatchObject({ cached: false });
    expect(await probe(t, 'audience/coverage', { ...body, refresh: true })).toMatchObject({ cached: true, refreshDeclined: true, nextRefreshIn: REFRESH_INTERVAL_MS / 1000 });
    const volumes = await probe(t, 'event/volumes', { refresh: true });
    expect(volumes).toMatchObject({ cached: false });
    expect(volumes.refreshDeclined).toBeUndefined();
    const elsewhere = await probe(other, 'audience/coverage', { ...body, refresh: true });
    expect(elsewhere).toMatchObject({ cached: false });
    expect(elsewhere.refreshDeclined).toBeUndefined();
  });

  it('never caches a call with a root (rule 3)', async () => {
    const root = { type: 'group', children: [] };
    const a = await coverage({ root, attributes: ['loyalty_tier'] });
    await addContact();
    const b = await coverage({ root, attributes: ['loyalty_tier'] });
    expect([a.cached, b.cached]).toEqual([false, false]);
    expect(b.denominator.count).toBe(a.denominator.count + 1);
  });

  it('recomputes a profile older than an hour instead of serving it', async () => {
    const body = { attributes: ['_city'] };
    await coverage(body);
    clock.advance(59 * 60_000);
    expect(await coverage(body)).toMatchObject({ cached: true });
    clock.advance(2 * 60_000);
    expect(await coverage(body)).toMatchObject({ cached: false, computedAgo: 0 });
  });

  it('computes once for two concurrent cold calls', async () => {
    const spy = jest.spyOn(app.get(CoverageUseCase), 'execute');
    try {
      const body = { attributes: ['_language', '_gender'] };
      const [a, b] = await Promise.all([coverage(body), coverage(body)]);
      expect(spy).toHaveBeenCalledTimes(1);
      expect(a.computedAt).toBe(b.computedAt);
    } finally {
      spy.mockRestore();
    }
  });

  it('gives two concurrent calls on a profile older than an hour the recomputed one, never the expired one', async () => {
    const body = { attributes: ['_city', '_language'] };
    const expired = await coverage(body);
    clock.advance(61 * 60_000);
    const usecase = app.get(CoverageUseCase);
    const execute = usecase.execute.bind(usecase);
    // A recomputation slower than the waiter's first look at the cache (100 ms).
    const spy = jest.spyOn(usecase, 'execute').mockImplementation(async (command) => {
      await new Promise((r) => setTimeout(r, 400));
      return execute(command);
    });
    try {
      const [a, b] = await Promise.all([coverage(body), coverage(body)]);
      expect(spy).toHaveBeenCalledTimes(1);
      for (const answer of [a, b]) expect(answer).toMatchObject({ cached: false, computedAgo: 0 });
      expect(a.computedAt).toBe(b.computedAt);
      expect(b.computedAt).not.toBe(expired.computedAt);
    } finally {
      spy.mockRestore();
    }
  });

  it('counts computedAgo from computedAt, however long the computation took', async () => {
    const body = { attributes: ['_country'] };
    const usecase = app.get(CoverageUseCase);
    const execute = usecase.execute.bind(usecase);
    // A computation of 30 s (a large audience on a loaded machine), on the frozen clock.
    const spy = jest.spyOn(usecase, 'execute').mockImplementation(async (command) => {
      const answer = await execute(command);
      clock.advance(30_000);
      return answer;
    });
    try {
      const computed = await coverage(body);
      expect(computed).toMatchObject({ cached: false, computedAgo: 0 });
      const cached = await coverage(body);
      expect(cached).toMatchObject({ cached: true, computedAt: computed.computedAt });
      expect(cached.computedAgo).toBe((clock.now() - Date.parse(computed.computedAt)) / 1000);
    } finally {
      spy.mockRestore();
    }
  });

  it('lets one of two concurrent refreshes recompute and declines the other (rule 2)', async () => {
    const body = { attributes: ['_language'] };
    await coverage(body);
    clock.advance(REFRESH_INTERVAL_MS);
    const spy = jest.spyOn(app.get(CoverageUseCase), 'execute');
    try {
      const answers = await Promise.all([coverage({ ...body, refresh: true }), coverage({ ...body, refresh: true })]);
      expect(spy).toHaveBeenCalledTimes(1);
      expect(answers.map((a) => [a.cached, a.refreshDeclined ?? false]).sort()).toEqual([
        [false, false],
        [true, true],
      ]);
    } finally {
      spy.mockRestore();
    }
  });

  it('gives the refresh back when the recomputation fails: the next refresh recomputes', async () => {
    const body = { attributes: ['_gender'] };
    const before = await coverage(body);
    clock.advance(REFRESH_INTERVAL_MS);
    await proxy.stop();
    try {
      const failed = await call({ ...body, refresh: true });
      expect(failed.status).toBeGreaterThanOrEqual(500);
    } finally {
      await proxy.resume();
    }
    await addContact();
    const again = await coverage({ ...body, refresh: true });
    expect(again).toMatchObject({ cached: false, computedAgo: 0, denominator: { count: before.denominator.count + 1 } });
    expect(again.refreshDeclined).toBeUndefined();
    // And that one was spent.
    expect(await coverage({ ...body, refresh: true })).toMatchObject({ cached: true, refreshDeclined: true });
  });
});
