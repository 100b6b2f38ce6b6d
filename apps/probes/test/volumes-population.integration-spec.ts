import type { ClickHouse } from '@meld/clickhouse';
import { AudienceSnapshotFixture, seedTenancy, type Json } from '@meld/fixtures';
import type { INestApplication } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { addAttributes, contactRow, probeHeaders, startProbes } from './probes.fixture';

/**
 * The event-volumes population of a root (`event.sampling.population`) is the exact number of
 * current contacts matching it, also while the audience sink writes new states (a −1 of the
 * stored state and a +1 of the new one per contact, one insert each): it sums `sign` in one read
 * (ADR 0282), where counting the current rows read the table twice and an insert landing between
 * the two showed the contacts it changed twice (60 or 70 instead of 50, every run).
 */
describe('event volumes population of a root', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let ch: ClickHouse;

  beforeAll(async () => {
    ({ app, base, db, ch } = await startProbes({ LOG_LEVEL: 'error' }));
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
  });

  type Tenancy = Awaited<ReturnType<typeof seedTenancy>>;
  const ids = Array.from({ length: 100 }, () => randomUUID());
  // Plans never change (50 pro, 50 free); tiers change with every write.
  const plan = (i: number) => (i < 50 ? 'pro' : 'free');
  const root = { type: 'attribute_condition', key: 'plan', operator: 'matches-string', values: ['pro'] };

  /** A project whose attributes are slotted (each single-valued attribute has its `s<slot>` column). */
  const project = async (name: string) => {
    const t = await seedTenancy(db, name);
    await addAttributes(db, t.project.id, [
      { uid: 'plan', type: 'string' },
      { uid: 'tier', type: 'string' },
    ]);
    const snapshot = new AudienceSnapshotFixture(ch, db);
    const state = (i: number, version: number) => contactRow(t.project.id, ids[i], { version, str: { plan: plan(i), tier: version % 2 ? 'gold' : 'silver' } });
    await snapshot.write(ids.map((_, i) => state(i, 1)));
    return { t, snapshot, state };
  };
  const population = async (t: Tenancy): Promise<number> => {
    const res = await fetch(`${base}/v1/project/${t.project.uid}/event/volumes`, { method: 'POST', headers: probeHeaders(t, { surface: 'event/volumes' }), body: JSON.stringify({ root, event: 'purchase' }) });
    const body = (await res.json()) as Json;
    expect({ status: res.status, body: res.status === 200 ? 'ok' : body }).toEqual({ status: 200, body: 'ok' });
    return body.metadata.event.sampling.population;
  };

  it('counts the contacts of a root on a slotted attribute (the band columns are not named like slot columns)', async () => {
    const { t } = await project('volumes-population-slots');
    expect(await population(t)).toBe(50);
  });

  it('stays exact while the sink writes new states of the root contacts', async () => {
    const { t, snapshot, state } = await project('volumes-population-writes');
    let writing = true;
    const writes = (async () => {
      for (let round = 2; round <= 61; round++) {
        // 20 contacts, pro and free, get a new state per insert.
        const picked = Array.from({ length: 20 }, (_, k) => (round * 37 + k * 5) % 100);
        await snapshot.write(picked.map((i) => state(i, round)));
      }
      writing = false;
    })();
    const seen: number[] = [];
    try {
      while (writing) seen.push(await population(t));
    } finally {
      await writes;
    }
    expect(seen.length).toBeGreaterThan(3);
    expect(seen.filter((n) => n !== 50)).toEqual([]);
  }, 90000);
});
