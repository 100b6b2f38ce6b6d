import type { DataSource } from 'typeorm';
import { ProjectContextCache } from './project-context.cache';

describe('ProjectContextCache', () => {
  const project = '0b5cc6f4-6f0e-4b8a-9d4e-6a3f1c2d3e4f';
  let now = 0;
  let catalogue: Array<{ uid: string; type: string }> = [];
  let reads = 0;
  const db = {
    query: async () => {
      reads++;
      return catalogue.map((a) => ({ ...a, locale: 'fr_FR' }));
    },
  } as unknown as DataSource;
  const iso = (ms: number) => new Date(ms).toISOString();
  const make = () => new ProjectContextCache(db, { ttlMs: 60_000, clockSkewMs: 1_000 }, () => now);

  beforeEach(() => {
    now = Date.parse('2026-11-21T10:00:00.000Z');
    catalogue = [{ uid: 'score', type: 'number' }];
    reads = 0;
  });

  it('reads a project once, then again after the TTL', async () => {
    const cache = make();
    expect((await cache.get(project, ['score'], iso(now))).types.get('score')).toBe('number');
    await cache.get(project, ['score'], iso(now));
    expect(reads).toBe(1);
    now += 60_000;
    await cache.get(project, ['score'], iso(now));
    expect(reads).toBe(2);
  });

  it('reads again for a key unknown to a read older than the step, not for one unknown to a newer read', async () => {
    const cache = make();
    await cache.get(project, [], iso(now));
    catalogue.push({ uid: 'renewal', type: 'date' });
    now += 10;
    expect((await cache.get(project, ['renewal'], iso(now))).types.get('renewal')).toBe('date');
    expect(reads).toBe(2);
    // A key no read will ever know: once the catalogue is newer than the step (plus skew), no more reads.
    now += 5_000;
    await cache.get(project, ['ghost'], iso(now - 4_000));
    expect(reads).toBe(3);
    await cache.get(project, ['ghost'], iso(now - 4_000));
    await cache.get(project, ['ghost'], iso(now - 3_000));
    expect(reads).toBe(3);
  });

  it('gives a project that is not a uuid an empty catalogue without a query', async () => {
    const context = await make().get('not-a-uuid', ['x'], iso(now));
    expect(context).toEqual({ types: new Map(), slotted: [], locale: null });
    expect(reads).toBe(0);
  });
});
