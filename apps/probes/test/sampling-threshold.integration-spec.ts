import type { ClickHouse } from '@meld/clickhouse';
import { seedTenancy, type Json } from '@meld/fixtures';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { EXTREMES_OMITTED } from '../src/coverage/coverage-entry';
import { addAttributes, type Contact, eventRow, insertContacts, memberRow, probeHeaders, startProbes } from './probes.fixture';

/**
 * The 10,000-contact boundary on the real stores (probe rules 8, 9 and 11, "Limits"): 9,999
 * contacts are read whole (coverage exact with min and max, volumes' default window 90 days,
 * parameter values unsampled); 10,000 open the 75% band (extremes omitted, 30 days, parameter
 * values sampled by contact), and a root under 10,000 keeps the project's band for parameter
 * values while coverage follows its own denominator.
 */
describe('probes at exactly 10,000 contacts', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let ch: ClickHouse;

  beforeAll(async () => {
    ({ app, base, db, ch } = await startProbes());
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
  });

  it.each([
    [9_999, false, 90],
    [10_000, true, 30],
  ])('%i contacts: sampled %s, a %i-day default window', async (size, sampled, days) => {
    const t = await seedTenancy(db, `threshold-${size}`);
    await addAttributes(db, t.project.id, [{ uid: 'level', type: 'number' }]);
    const contacts = Array.from({ length: size }, (_, i): [string, Contact] => [`threshold-${t.project.id}-${i}`, { str: { loyalty_tier: i % 2 ? 'gold' : 'silver' }, num: { level: i % 7 } }]);
    await insertContacts(ch, db, t.project.id, contacts);
    await ch.insert('audience_membership', contacts.slice(0, 50).map(([id], i) => memberRow(t.project.id, t.dataSource.id, `u${i}`, id)));
    await ch.insert('events', contacts.slice(0, 50).map((_, i) => eventRow(t.project.id, t.dataSource.id, `u${i}`, 'purchase', new Date(Date.now() - 86_400_000))));
    const probe = async (surface: 'audience/coverage' | 'event/volumes', body: object) => {
      const res = await fetch(`${base}/v1/project/${t.project.uid}/${surface}`, { method: 'POST', headers: probeHeaders(t, { surface, plan: 'xl' }), body: JSON.stringify(body) });
      expect(res.status).toBe(200);
      return ((await res.json()) as Json).metadata;
    };
    const band = sampled ? { applied: true, fraction: 0.75, buckets: 75 } : { applied: false, fraction: 1, buckets: 100 };

    const coverage = await probe('audience/coverage', { attributes: ['level'] });
    expect(coverage.sampling).toMatchObject({ ...band, scaled: sampled });
    expect(coverage.denominator.count).toBe(size);
    expect(coverage.attributes[0].stats).toEqual(sampled ? { avg: expect.any(Number), extremesOmitted: EXTREMES_OMITTED } : { avg: expect.any(Number), min: 0, max: 6 });
    expect(coverage.attributes[0]).toMatchObject({ approximate: sampled, topValues: expect.arrayContaining([expect.objectContaining({ approximate: sampled })]) });

    const volumes = await probe('event/volumes', { event: 'purchase' });
    expect(volumes.window).toMatchObject({ days, clamped: false });
    expect(volumes.sampling.applied).toBe(false);
    expect(volumes.eventTypes[0]).toMatchObject({ uid: 'purchase', count: 50, received: true });
    expect(volumes.event.sampling).toMatchObject({ ...band, unit: 'contacts', population: size });

    // Half the audience: coverage reads it whole (its own denominator), parameter values keep the project's band.
    const root = { type: 'attribute_condition', key: 'loyalty_tier', operator: 'matches-string', values: ['gold'] };
    expect((await probe('audience/coverage', { root, attributes: ['level'] })).sampling).toMatchObject({ applied: false, fraction: 1 });
    expect((await probe('event/volumes', { root, event: 'purchase' })).event.sampling).toMatchObject({ ...band, population: Math.floor(size / 2) });
  }, 120000);
});
