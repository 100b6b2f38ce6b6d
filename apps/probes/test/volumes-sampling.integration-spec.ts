import { type ClickHouse, sampleBound, sql } from '@meld/clickhouse';
import { EventParameterEntity, EventTypeEntity } from '@meld/db';
import { seedTenancy, type Json } from '@meld/fixtures';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { Z95, estimateTotal } from '../src/shared/estimators';
import { VolumesSchema } from '../src/volumes/volumes.schema';
import { eventRow, insertContacts, memberRow, probeHeaders, prng, startProbes } from './probes.fixture';

const CONTACTS = 12_000;
const HEAVY = 300;
const HEAVY_EVENTS = 40;
const LIGHT = 3_000;
/** Contacts holding P-mixed, contact i with mixedEvents(i) purchases of it: per-contact sums of unequal sizes. */
const MIXED = 400;
const mixedEvents = (i: number) => 1 + (i % 9);
const mixedIndices = Array.from({ length: MIXED }, (_, k) => HEAVY + LIGHT + k);
const MIXED_TOTAL = mixedIndices.reduce((s, i) => s + mixedEvents(i), 0);

/**
 * Parameter values sampled by contact (probe rule 11, ADR 0166) on 12,000 contacts (the 75% band):
 * 300 contacts with 40 purchases of P-heavy each, 3,000 with one purchase of P-light, 400 with
 * 1 to 9 of P-mixed.
 */
describe('event volumes: parameter values sampled by contact', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let ch: ClickHouse;
  let t: Awaited<ReturnType<typeof seedTenancy>>;
  let contactIds: string[];

  beforeAll(async () => {
    ({ app, base, db, ch } = await startProbes());
    t = await seedTenancy(db, 'volumes-sampling');
    // product-id is listed once a name parameter pairs with it (rule 13).
    const purchase = await db.getRepository(EventTypeEntity).findOneByOrFail({ projectId: t.project.id, uid: 'purchase' });
    await db.getRepository(EventParameterEntity).insert({ eventTypeId: purchase.id, parameter: 'product-name', title: 'Product name', dataType: 'string' });
    const random = prng(15);
    // Ids from the seeded generator: the same contacts fall in the sample on every run.
    const hex = () => Math.floor(random() * 2 ** 32).toString(16).padStart(8, '0');
    const ids = Array.from({ length: CONTACTS }, () => `${hex()}-${hex()}-${hex()}-${hex()}`);
    await insertContacts(ch, db, t.project.id, ids.map((id, i) => [id, { str: { loyalty_tier: i < 2_000 ? 'gold' : 'silver' } }] as const));
    const p = t.project.id;
    const ds = t.dataSource.id;
    await ch.insert('audience_membership', ids.map((id, i) => memberRow(p, ds, `u${i}`, id)));
    const day = (n: number) => new Date(Date.now() - (1 + Math.floor(random() * n)) * 86_400_000);
    const events = [];
    for (let i = 0; i < HEAVY; i++) for (let k = 0; k < HEAVY_EVENTS; k++) events.push(eventRow(p, ds, `u${i}`, 'purchase', day(10), { 'product-id': 'P-heavy' }));
    for (let i = HEAVY; i < HEAVY + LIGHT; i++) events.push(eventRow(p, ds, `u${i}`, 'purchase', day(10), { 'product-id': 'P-light' }));
    for (const i of mixedIndices) for (let k = 0; k < mixedEvents(i); k++) events.push(eventRow(p, ds, `u${i}`, 'purchase', day(10), { 'product-id': 'P-mixed' }));
    await ch.insert('events', events);
    contactIds = ids;
  }, 120000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
  });

  const volumes = async (body: unknown) => {
    const res = await fetch(`${base}/v1/project/${t.project.uid}/event/volumes`, { method: 'POST', headers: probeHeaders(t, { surface: 'event/volumes' }), body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    const json = (await res.json()) as Json;
    VolumesSchema.parse(json);
    return json.metadata;
  };

  it('counts types exactly and samples parameter values by contact, with error bars that see contacts with many events', async () => {
    const m = await volumes({ event: 'purchase' });
    const total = HEAVY * HEAVY_EVENTS + LIGHT + MIXED_TOTAL;
    expect(m.sampling.applied).toBe(false);
    expect(m.eventTypes.find((e: Json) => e.uid === 'purchase').count).toBe(total);
    expect(m.event.count).toBe(total);
    expect(m.event.sampling).toMatchObject({ applied: true, fraction: 0.75, buckets: 75, scaled: true, minReliableCount: 30, unit: 'contacts', population: CONTACTS });
    expect(Math.abs(m.event.sampling.scanned - 0.75 * CONTACTS)).toBeLessThan(0.02 * CONTACTS);
    const [heavy, light] = m.event.parameters.find((p: Json) => p.uid === 'product-id').values;
    expect([heavy.value, light.value]).toEqual(['P-heavy', 'P-light']);
    expect(heavy).toMatchObject({ approximate: true, reliable: true });
    expect(heavy.observedCount).toBe(heavy.observedContacts * HEAVY_EVENTS);
    // The truth inside the interval.
    expect(Math.abs(heavy.count - HEAVY * HEAVY_EVENTS)).toBeLessThanOrEqual(heavy.countError);
    expect(Math.abs(light.count - LIGHT)).toBeLessThanOrEqual(light.countError);
    // A binomial on events would treat the 40 purchases of one contact as 40 draws: far too narrow.
    const f = m.event.sampling.scanned / CONTACTS;
    const sampledEvents = heavy.observedCount + light.observedCount;
    const share = heavy.observedCount / sampledEvents;
    const binomialOnEvents = (Z95 * Math.sqrt(sampledEvents * share * (1 - share) * (1 - f))) / f;
    expect(heavy.countError).toBeGreaterThan(3 * binomialOnEvents);
  });

  it("reads each value's per-contact sums of the sampled contacts in the one events read: Σn, Σn² and contacts (ADR 0247)", async () => {
    const m = await volumes({ event: 'purchase' });
    const { scanned, population } = m.event.sampling;
    // The sampled contacts, as the probe picks them: the first 75 hash buckets of the audience.
    const rows = await ch.query<{ id: string }>(sql`SELECT audience_id AS id FROM audience_snapshot WHERE project_id = ${t.project.id} AND deleted = 0 AND audience_hash < ${sampleBound(75)} GROUP BY audience_id HAVING sum(sign) > 0`);
    const inSample = new Set(rows.map((r) => r.id));
    expect(inSample.size).toBe(scanned);
    const expected = (indices: number[], eventsOf: (i: number) => number) => {
      const sampled = indices.filter((i) => inSample.has(contactIds[i])).map(eventsOf);
      return { sum: sampled.reduce((s, n) => s + n, 0), squares: sampled.reduce((s, n) => s + n * n, 0), contacts: sampled.length };
    };
    const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => from + k);
    const truth = new Map([
      ['P-heavy', expected(range(0, HEAVY), () => HEAVY_EVENTS)],
      ['P-light', expected(range(HEAVY, HEAVY + LIGHT), () => 1)],
      ['P-mixed', expected(mixedIndices, mixedEvents)],
    ]);
    const values = m.event.parameters.find((p: Json) => p.uid === 'product-id').values as Json[];
    expect(values.map((v) => v.value)).toEqual(['P-heavy', 'P-light', 'P-mixed']);
    for (const v of values) {
      const e = truth.get(v.value)!;
      expect({ value: v.value, observedCount: v.observedCount, observedContacts: v.observedContacts }).toEqual({ value: v.value, observedCount: e.sum, observedContacts: e.contacts });
      // Σn² reaches the answer only through the error bar: the one it gives is the one the sums give.
      expect(v.countError).toBe(estimateTotal(e.sum, e.squares, scanned, population, true).countError);
    }
  });

  it('keeps the band of the whole project audience under a root matching fewer than 10,000 contacts (rule 11)', async () => {
    const root = { type: 'attribute_condition', key: 'loyalty_tier', operator: 'matches-string', values: ['gold'] };
    const m = await volumes({ root, event: 'purchase' });
    expect(m.sampling.applied).toBe(false);
    expect(m.eventTypes.find((e: Json) => e.uid === 'purchase').count).toBe(2_000 - HEAVY + HEAVY * HEAVY_EVENTS);
    expect(m.event.sampling).toMatchObject({ applied: true, fraction: 0.75, buckets: 75, population: 2_000 });
    const [heavy, light] = m.event.parameters.find((p: Json) => p.uid === 'product-id').values;
    expect(Math.abs(heavy.count - HEAVY * HEAVY_EVENTS)).toBeLessThanOrEqual(heavy.countError);
    expect(Math.abs(light.count - (2_000 - HEAVY))).toBeLessThanOrEqual(light.countError);
  });
});
