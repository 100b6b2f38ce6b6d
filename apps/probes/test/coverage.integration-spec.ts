import { randomUUID } from 'node:crypto';
import type { ClickHouse } from '@meld/clickhouse';
import { seedTenancy, type Json } from '@meld/fixtures';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { AVG_WITHHELD, EXTREMES_WITHHELD } from '../src/coverage/coverage-entry';
import { CoverageSchema } from '../src/coverage/coverage.schema';
import { MAX_PROFILED_ATTRIBUTES } from '../src/coverage/profiled-attributes';
import { TOP_VALUES_OMITTED } from '../src/coverage/top-values-policy';
import { ProbeReads } from '../src/shared/probe-reads';
import { addAttributes, type Contact, insertContacts, probeHeaders, startProbes } from './probes.fixture';

/**
 * POST /audience/coverage on a small audience (nothing sampled, every figure exact and checked by
 * hand), over audience_contacts rows as the probes sink writes them. Sampling and accuracy:
 * coverage-sampling.integration-spec.ts.
 */
describe('audience coverage (unsampled)', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let ch: ClickHouse;
  let t: Awaited<ReturnType<typeof seedTenancy>>;
  const ids = Array.from({ length: 10 }, () => randomUUID());

  beforeAll(async () => {
    ({ app, base, db, ch } = await startProbes());
    t = await seedTenancy(db, 'coverage');
    await addAttributes(db, t.project.id, [
      { uid: 'tags', type: 'string', multivalue: true },
      { uid: 'score', type: 'number' },
      { uid: 'order_id', type: 'string' },
      { uid: 'work_email', type: 'email' },
      { uid: 'vip', type: 'boolean' },
      { uid: 'hidden_note', type: 'string', visible: false },
      { uid: 'referrer', type: 'string' },
      // An acronym before the identifier word: read as `api token`, not as one word `apitoken`.
      { uid: 'APIToken', type: 'string' },
      // A plural of an identifier word: a multivalue attribute of tokens.
      { uid: 'push_tokens', type: 'string', multivalue: true },
      // A number no contact has: avg, min and max are null, not 0.
      { uid: 'rating', type: 'number' },
    ]);
    const contacts: Array<[string, Contact]> = ids.map((id, i) => [
      id,
      {
        str: {
          ...(i < 7 ? { loyalty_tier: i < 4 ? 'gold' : 'silver' } : {}),
          ...(i === 0 ? { tags: ['a', 'b'] } : i === 1 ? { tags: ['a', 'a'] } : i === 2 ? { tags: ['c'] } : {}),
          order_id: `order-${i}`,
          ...(i < 3 ? { work_email: ['ann@example.com', 'ann@example.com', 'bob@example.org'][i] } : {}),
          _email: `c${i}@example.com`,
          // Free text holding an email or a phone: masked as contact data wherever it shows (ADR 0121).
          ...(i < 3 ? { referrer: ['from dan@example.net', 'call +33 6 12 34 56 78', '06 12 34 56 78 07 98 76 54 32'][i] } : {}),
          ...(i < 3 ? { APIToken: i < 2 ? 'tok-shared' : 'tok-other' } : {}),
          ...(i < 2 ? { push_tokens: ['tok-device-a', 'tok-device-b'] } : {}),
        },
        num: { ...(i < 5 ? { score: i + 1 } : {}), ...(i < 2 ? { vip: i } : {}) },
      },
    ]);
    // A deleted contact and an older version: neither counts.
    contacts.push([randomUUID(), { str: { loyalty_tier: 'gold' }, deleted: 1 }]);
    await insertContacts(ch, db, t.project.id, contacts);
    await insertContacts(ch, db, t.project.id, [[ids[9], { str: { loyalty_tier: 'bronze', order_id: 'order-9', _email: 'c9@example.com' }, version: 0 }]]);
    // Membership: the data source contributed to contacts 0 and 1; contact 2 left it.
    await ch.insert('audience_membership', [
      { project_id: t.project.id, data_source_id: t.dataSource.id, user_id: 'u0', audience_id: ids[0], version: '2', deleted: 0 },
      { project_id: t.project.id, data_source_id: t.dataSource.id, user_id: 'u1', audience_id: ids[1], version: '2', deleted: 0 },
      { project_id: t.project.id, data_source_id: t.dataSource.id, user_id: 'u2', audience_id: ids[2], version: '2', deleted: 0 },
      { project_id: t.project.id, data_source_id: t.dataSource.id, user_id: 'u2', audience_id: ids[2], version: '4', deleted: 1 },
    ]);
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
  });

  const coverage = async (body: unknown, opts?: Parameters<typeof probeHeaders>[1]) => {
    const res = await fetch(`${base}/v1/project/${t.project.uid}/audience/coverage`, { method: 'POST', headers: probeHeaders(t, opts), body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const entry = (body: Json, uid: string) => body.metadata.attributes.find((a: Json) => a.uid === uid);

  it('profiles the visible, enabled, non-internal, non-identity attributes with exact figures (rules 4, 9)', async () => {
    const { status, body } = await coverage({});
    expect(status).toBe(200);
    CoverageSchema.parse(body);
    const m = body.metadata;
    const uids = m.attributes.map((a: Json) => a.uid);
    expect(uids).toEqual(expect.arrayContaining(['loyalty_tier', 'tags', 'score', 'order_id', 'work_email', 'vip', '_country']));
    for (const hidden of ['_email', '_user_id', '_phone_mobile', 'legacy_score', 'hidden_note', '_datasources', '_created_at']) expect(uids).not.toContain(hidden);
    expect(m.sampling).toEqual({ applied: false, fraction: 1, buckets: 100, band: 'under 10,000 contacts: not sampled', scanned: 10, scaled: false, minReliableCount: 30 });
    expect(m.denominator).toEqual({ count: 10, definition: 'current audience contacts' });
    expect(m).toMatchObject({ cached: false, computedAgo: 0 });
    expect(m.summary).toMatch(/profiled over current audience contacts, exact\.$/);
    expect(entry(body, 'loyalty_tier')).toEqual({
      uid: 'loyalty_tier',
      label: 'Loyalty tier',
      type: 'string',
      multivalue: false,
      fillRate: 0.7,
      fillRateError: 0,
      fillRateInterval: [0.7, 0.7],
      filled: 7,
      filledError: 0,
      observedFilled: 7,
      approximate: false,
      reliable: true,
      distinctValues: 2,
      topValues: [
        { value: 'gold', count: 4, observedCount: 4, approximate: false, reliable: true, countError: 0 },
        { value: 'silver', count: 3, observedCount: 3, approximate: false, reliable: true, countError: 0 },
      ],
      topValuesOther: 0,
      summary: 'Loyalty tier is filled for 70% of contacts, 2 distinct values, most often "gold", exact.',
    });
  });

  it('gives numbers avg, min and max when nothing is sampled, booleans as booleans', async () => {
    const { body } = await coverage({});
    expect(entry(body, 'score')).toMatchObject({ fillRate: 0.5, stats: { avg: 3, min: 1, max: 5 } });
    expect(entry(body, 'score').stats.extremesOmitted).toBeUndefined();
    expect(entry(body, 'rating')).toMatchObject({ fillRate: 0, observedFilled: 0, stats: { avg: null, min: null, max: null } });
    expect(entry(body, 'vip').topValues.map((v: Json) => [v.value, v.count])).toEqual([[false, 1], [true, 1]]);
  });

  it('counts multivalue values by contact and says so; shares may sum past 100% (rule 14)', async () => {
    const { body } = await coverage({});
    const tags = entry(body, 'tags');
    expect(tags.fillRate).toBe(0.3);
    expect(tags.topValues.map((v: Json) => [v.value, v.count])).toEqual([['a', 2], ['b', 1], ['c', 1]]);
    expect(tags.topValues.reduce((s: number, v: Json) => s + v.count, 0)).toBeGreaterThan(tags.filled);
    expect(tags.topValuesSemantics).toMatch(/contacts holding the value/);
    expect(tags.topValuesOther).toBe(0);
    expect(entry(body, 'loyalty_tier').topValuesSemantics).toBeUndefined();
  });

  it('withholds top values with the reason, never for emptiness (rule 7); naming an attribute overrides only the name rule (rule 4)', async () => {
    const { body } = await coverage({});
    expect(entry(body, 'order_id')).toMatchObject({ topValuesOmitted: TOP_VALUES_OMITTED.identifier, distinctValues: 10 });
    expect(entry(body, 'order_id').topValues).toBeUndefined();
    expect(entry(body, 'APIToken')).toMatchObject({ topValuesOmitted: TOP_VALUES_OMITTED.identifier, distinctValues: 2 });
    expect(entry(body, 'push_tokens')).toMatchObject({ topValuesOmitted: TOP_VALUES_OMITTED.identifier, distinctValues: 2 });
    for (const uid of ['APIToken', 'push_tokens']) expect(JSON.stringify(entry(body, uid))).not.toContain('tok-');
    expect(entry(body, '_city')).toMatchObject({ fillRate: 0, topValues: [], topValuesOther: 0 });
    expect(entry(body, '_city').topValuesOmitted).toBeUndefined();
    const named = await coverage({ attributes: ['order_id', '_email', 'hidden_note'] });
    expect(named.body.metadata.attributes.map((a: Json) => a.uid)).toEqual(['order_id', '_email', 'hidden_note']);
    expect(entry(named.body, 'order_id').topValues).toHaveLength(10);
    expect(entry(named.body, '_email')).toMatchObject({ fillRate: 1, distinctValues: 10, topValuesOmitted: TOP_VALUES_OMITTED.identity });
  });

  it('shows PII top values by the data mode: clear, masked when anonymized or without Basic, withheld when blocked', async () => {
    const values = async (opts: Parameters<typeof probeHeaders>[1]) => entry((await coverage({ attributes: ['work_email'] }, opts)).body, 'work_email');
    expect((await values({ scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_BASIC'] })).topValues.map((v: Json) => v.value)).toEqual(['ann@example.com', 'bob@example.org']);
    expect((await values({ scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_BASIC'], dataMode: 'anonymized' })).topValues.map((v: Json) => v.value)).toEqual(['a***@e***.com', 'b***@e***.org']);
    expect((await values({ scopes: ['PROJECT_AUDIENCE_READ'] })).topValues.map((v: Json) => v.value)).toEqual(['a***@e***.com', 'b***@e***.org']);
    const blocked = await values({ scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_FULL'], dataMode: 'blocked' });
    expect(blocked).toMatchObject({ fillRate: 0.3, topValuesOmitted: TOP_VALUES_OMITTED.dataMode });
    expect(JSON.stringify(blocked)).not.toMatch(/ann|bob/);
  });

  it('masks emails and phones inside other text values where the caller does not read them in clear', async () => {
    const values = async (opts: Parameters<typeof probeHeaders>[1]) => entry((await coverage({ attributes: ['referrer'] }, opts)).body, 'referrer').topValues.map((v: Json) => v.value).sort();
    expect(await values({ scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_BASIC'] })).toEqual(['06 12 34 56 78 07 98 76 54 32', 'call +33 6 12 34 56 78', 'from dan@example.net']);
    const callers: Array<Parameters<typeof probeHeaders>[1]> = [
      { scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_BASIC'], dataMode: 'anonymized' },
      { scopes: ['PROJECT_AUDIENCE_READ'] },
    ];
    for (const opts of callers) {
      const shown = await values(opts);
      // Two numbers side by side are masked too, not left whole as one run too long for a phone.
      expect(shown).toEqual([expect.stringMatching(/^06\*+32$/), expect.stringMatching(/^call \+33/), expect.stringMatching(/^from d\*+@/)]);
      expect(shown.join()).not.toMatch(/dan@|12 34 56|98 76 54/);
    }
  });

  it('shows no value of any attribute in a blocked project, nor avg, min or max, even narrowed to one contact; presence and distinct counts stay (ADR 0164)', async () => {
    const blocked: Parameters<typeof probeHeaders>[1] = { scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_FULL'], dataMode: 'blocked' };
    const attributes = ['loyalty_tier', 'tags', 'score', 'vip', 'referrer', 'work_email', 'order_id', '_email'];
    // Contact 0 alone: gold, tags a and b, score 1, vip false, a referrer and a work email.
    const one = { type: 'attribute_condition', key: 'order_id', operator: 'matches-string', values: ['order-0'] };
    for (const [root, contacts, scoreFill] of [[undefined, 10, 0.5], [one, 1, 1]] as const) {
      const { status, body } = await coverage({ root, attributes }, blocked);
      expect(status).toBe(200);
      CoverageSchema.parse(body);
      expect(body.metadata.denominator.count).toBe(contacts);
      for (const uid of attributes) {
        expect(entry(body, uid)).toMatchObject({ topValuesOmitted: TOP_VALUES_OMITTED.dataMode });
        expect(entry(body, uid).topValues).toBeUndefined();
      }
      expect(entry(body, 'score')).toMatchObject({ fillRate: scoreFill, distinctValues: contacts === 1 ? 1 : 5 });
      expect(entry(body, 'score').stats).toEqual({ avg: null, avgOmitted: AVG_WITHHELD, extremesOmitted: EXTREMES_WITHHELD });
      expect(entry(body, 'tags')).toMatchObject({ fillRate: contacts === 1 ? 1 : 0.3, distinctValues: contacts === 1 ? 2 : 3 });
      expect(JSON.stringify(body)).not.toMatch(/gold|silver|ann@|bob@|dan@|12 34 56|order-\d|@example\.com|most often/);
    }
  });

  it('narrows to the contacts a data source contributed to, by id (in any case), uid or connector (rule 6)', async () => {
    for (const datasource of [t.dataSource.id, t.dataSource.id.toUpperCase(), t.dataSource.uid, 'api']) {
      const { status, body } = await coverage({ datasource, attributes: ['loyalty_tier'] });
      expect(status).toBe(200);
      expect(body.metadata.denominator.count).toBe(2);
      expect(body.metadata.datasource).toMatchObject({ query: datasource, matched: [{ id: t.dataSource.id, uid: t.dataSource.uid }] });
      expect(body.metadata.datasource.meaning).toMatch(/membership/);
    }
  });

  it('refuses an unknown datasource with the list of what exists (rule 5), and unknown attributes by position', async () => {
    const { status, body } = await coverage({ datasource: 'nope' });
    expect(status).toBe(400);
    expect(body.details.datasources).toEqual([{ id: t.dataSource.id, uid: t.dataSource.uid, name: 'Web', connector: 'api' }]);
    const bad = await coverage({ attributes: ['loyalty_tier', 'nope'] });
    expect(bad.status).toBe(400);
    expect(bad.body.details.fields).toEqual([{ path: 'attributes[1]', message: 'unknown attribute "nope"' }]);
    expect((await coverage({ refresh: 'yes' })).body.details.fields[0].path).toBe('refresh');
  });

  it('applies a root through the audience filter compiler, and refuses PII conditions without mayReadPii', async () => {
    const root = { type: 'attribute_condition', key: 'loyalty_tier', operator: 'matches-string', values: ['GOLD'] };
    const { body } = await coverage({ root, attributes: ['score'] });
    expect(body.metadata.denominator).toEqual({ count: 4, definition: 'current audience contacts matching the filter' });
    expect(entry(body, 'score')).toMatchObject({ fillRate: 1, stats: { avg: 2.5, min: 1, max: 4 } });
    const bad = await coverage({ root: { type: 'attribute_condition', key: 'nope', operator: 'is-set', values: [] } });
    expect(bad.status).toBe(400);
    const pii = await coverage({ root: { type: 'attribute_condition', key: '_email', operator: 'matches-string', values: ['c1@example.com'] } });
    expect(pii.status).toBe(403);
  });

  it('refuses a root whose reads would pass what ClickHouse parses as a filter node: 400 at root, before any read (ADR 0058)', async () => {
    // Within every limit of the grammar (values, their characters), its query over 240 KiB.
    const contains = (i: number) => ({ type: 'attribute_condition', key: 'loyalty_tier', operator: 'contains-string', values: [`${'\\'.repeat(2040)}${i}`, 'x'] });
    const equals = (i: number) => ({ type: 'attribute_condition', key: 'score', operator: 'equals-number', values: Array.from({ length: 500 }, (_, j) => -1.2345678901234567e-300 * (i * 500 + j + 1)) });
    const root = { type: 'group', operator: 'or', children: [...Array.from({ length: 24 }, (_, i) => contains(i)), ...Array.from({ length: 9 }, (_, i) => equals(i))] };
    const reads = jest.spyOn(app.get(ProbeReads), 'row');
    const res = await coverage({ root });
    const calls = reads.mock.calls.length;
    reads.mockRestore();
    expect([res.status, res.body.details]).toEqual([400, { path: 'root' }]);
    expect(res.body.message).toMatch(/^invalid filter: root: the filter is too large/);
    expect(calls).toBe(0);
  });

  it('profiles without a root from the current rows of the collapsing snapshot, no FINAL: a changed contact counts once, with its new value (ADR 0223)', async () => {
    const other = await seedTenancy(db, 'coverage-changes');
    const [a, b] = [randomUUID(), randomUUID()];
    await insertContacts(ch, db, other.project.id, [
      [a, { str: { loyalty_tier: 'silver' }, version: 1 }],
      [b, { str: { loyalty_tier: 'silver' }, version: 1 }],
    ]);
    // a changes and b is deleted: each writes a −1 copy of its stored state beside the new one.
    await insertContacts(ch, db, other.project.id, [
      [a, { str: { loyalty_tier: 'gold' }, version: 2 }],
      [b, { deleted: 1, version: 2 }],
    ]);
    const reads = app.get(ProbeReads);
    const [row, rows] = [jest.spyOn(reads, 'row'), jest.spyOn(reads, 'rows')];
    const res = await fetch(`${base}/v1/project/${other.project.uid}/audience/coverage`, { method: 'POST', headers: probeHeaders(other), body: JSON.stringify({ attributes: ['loyalty_tier'] }) });
    const body = (await res.json()) as Json;
    const queries = [...row.mock.calls, ...rows.mock.calls].map(([query]) => String(query));
    row.mockRestore();
    rows.mockRestore();
    expect(res.status).toBe(200);
    expect(queries.length).toBeGreaterThan(1);
    for (const query of queries) expect(query).not.toContain('FINAL');
    expect(body.metadata.denominator.count).toBe(1);
    expect(entry(body, 'loyalty_tier')).toMatchObject({ filled: 1, distinctValues: 1, topValues: [{ value: 'gold', count: 1, observedCount: 1 }], topValuesOther: 0 });
  });

  it('caps the attributes profiled and names the ones left out', async () => {
    const many = Array.from({ length: MAX_PROFILED_ATTRIBUTES + 2 }, (_, i) => ({ uid: `extra_${String(i).padStart(2, '0')}`, type: 'number' as const }));
    const other = await seedTenancy(db, 'coverage-cap');
    await addAttributes(db, other.project.id, many);
    const res = await fetch(`${base}/v1/project/${other.project.uid}/audience/coverage`, { method: 'POST', headers: probeHeaders(other), body: '{}' });
    const body = (await res.json()) as Json;
    expect(body.metadata.attributes).toHaveLength(MAX_PROFILED_ATTRIBUTES);
    expect(body.metadata.truncated.limit).toBe(MAX_PROFILED_ATTRIBUTES);
    // Catalogue order: the reserved attributes first, so the last extras are the ones left out.
    expect(body.metadata.truncated.attributes).toEqual(expect.arrayContaining([`extra_${MAX_PROFILED_ATTRIBUTES}`, `extra_${MAX_PROFILED_ATTRIBUTES + 1}`]));
    for (const a of body.metadata.attributes) expect(body.metadata.truncated.attributes).not.toContain(a.uid);
    expect(body.metadata.summary).toMatch(/left out by the cap/);
  });
});
