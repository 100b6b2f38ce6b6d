import fc from 'fast-check';
import { computeAudience, contactRef, type DataSourceInfo, type MergeOptions, type MergeResult, type SourceContact } from './merge-core';
import { MemoryMergeState } from '../../test/memory-state';
import { planMerge } from './merge-step';

const sources = new Map<string, DataSourceInfo>([
  ['api', { id: 'api', priority: 0, isIngest: true }],
  ['crm', { id: 'crm', priority: 10, isIngest: false }],
  ['shop', { id: 'shop', priority: 5, isIngest: false }],
]);
const options: MergeOptions = { mergingAttributes: ['_email', '_phone_mobile'], locale: 'fr_FR' };
const byOldest = (ref: string) => `aud:${ref}`;

function contact(dataSourceId: string, userId: string, attributes: SourceContact['attributes'], seq: number, at = '2026-01-01T00:00:00Z'): SourceContact {
  return { dataSourceId, userId, attributes, attributeAt: Object.fromEntries(Object.keys(attributes).map((k) => [k, at])), seq };
}

function partition(result: MergeResult): string[][] {
  return result.audiences.map((a) => [...a.members].sort()).sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

describe('computeAudience', () => {
  it('merges contacts sharing a normalised email or phone, and _user_id across sources', () => {
    const r = computeAudience(
      [
        contact('crm', 'c1', { _email: ' Jane@X.com' }, 1),
        contact('shop', 's1', { _email: 'jane@x.com', _phone_mobile: '0612345678' }, 2),
        contact('api', 'a1', { _phone_mobile: '+33 6 12 34 56 78' }, 3),
        contact('api', 'c1', {}, 4),
        contact('shop', 'other', { _email: 'other@x.com' }, 5),
      ],
      sources,
      options,
      new Map(),
      byOldest,
    );
    expect(partition(r)).toEqual([['api/a1', 'api/c1', 'crm/c1', 'shop/s1'], ['shop/other']]);
    const merged = r.audiences.find((a) => a.members.includes('crm/c1'))!;
    expect(merged.id).toBe('aud:crm/c1');
    expect(merged.dataSources).toEqual(['api', 'crm', 'shop']);
    expect(merged.dsContactIds).toEqual(['api/a1', 'api/c1', 'crm/c1', 'shop/s1']);
  });

  it('never merges on junk values', () => {
    const r = computeAudience(
      [contact('crm', 'anonymous', { _email: 'null' }, 1), contact('shop', 'anonymous', { _email: 'null', _phone_mobile: '0' }, 2)],
      sources,
      options,
      new Map(),
      byOldest,
    );
    expect(r.audiences).toHaveLength(2);
  });

  it('picks values by ingest source, then priority, then newer write, with lineage', () => {
    const r = computeAudience(
      [
        contact('crm', 'u', { _first_name: 'Crm', city: 'Lyon', plan: 'gold' }, 1, '2026-01-03T00:00:00Z'),
        contact('shop', 'u', { _first_name: 'Shop', city: 'Paris', zip: '1' }, 2, '2026-01-05T00:00:00Z'),
        contact('api', 'u', { _first_name: 'Api' }, 3, '2026-01-01T00:00:00Z'),
        contact('shop', 'v', { _user_id: 'u', zip: '2' }, 4, '2026-01-06T00:00:00Z'),
      ],
      sources,
      { ...options, mergingAttributes: [] },
      new Map(),
      byOldest,
    );
    // shop/v merges on nothing (its userId is v); the others share _user_id u.
    const a = r.audiences.find((x) => x.members.includes('api/u'))!;
    expect(a.attributes).toMatchObject({ _first_name: 'Api', city: 'Lyon', plan: 'gold', zip: '1', _user_id: 'u' });
    expect(a.lineage).toMatchObject({ _first_name: 'api', city: 'crm', plan: 'crm', zip: 'shop' });
    const r2 = computeAudience(
      [contact('shop', 'u', { zip: '1' }, 1, '2026-01-01T00:00:00Z'), contact('shop', 'w', { zip: '2', k: 'x' }, 2, '2026-01-02T00:00:00Z')],
      sources,
      { ...options, mergingAttributes: ['k'] },
      new Map(),
      byOldest,
    );
    expect(r2.audiences).toHaveLength(2);
    const r3 = computeAudience(
      [contact('shop', 'u', { zip: '1', k: 'x' }, 1, '2026-01-01T00:00:00Z'), contact('shop', 'w', { zip: '2', k: 'x' }, 2, '2026-01-02T00:00:00Z')],
      sources,
      { ...options, mergingAttributes: ['k'] },
      new Map(),
      byOldest,
    );
    expect(r3.audiences[0].attributes.zip).toBe('2'); // same source and priority: newer write
  });

  it('stops absorbing at the cap and says why', () => {
    const contacts = Array.from({ length: 5 }, (_, i) => contact('crm', `u${i}`, { _email: 'shared@x.com' }, i));
    const r = computeAudience(contacts, sources, { ...options, cap: 3 }, new Map(), byOldest);
    expect(partition(r)).toEqual([['crm/u0', 'crm/u1', 'crm/u2'], ['crm/u3', 'crm/u4']]);
    expect(r.capEvents.map((e) => e.contact)).toEqual(['crm/u3', 'crm/u4']);
    expect(r.capEvents[0].reason).toMatch(/cap 3/);
  });

  it('merges nobody on a key more contacts carry than the hot key limit, and still on the others (ADR 0350)', () => {
    const contacts = [
      ...Array.from({ length: 4 }, (_, i) => contact('crm', `u${i}`, { _phone_mobile: '+33 6 00 00 00 00' }, i)),
      contact('shop', 'u0', { _email: 'u0@x.com' }, 10),
      contact('crm', 'x', { _email: 'u0@x.com' }, 11),
    ];
    expect(partition(computeAudience(contacts, sources, { ...options, hotKeyLimit: 3 }, new Map(), byOldest))).toEqual([['crm/u0', 'crm/x', 'shop/u0'], ['crm/u1'], ['crm/u2'], ['crm/u3']]);
    expect(partition(computeAudience(contacts, sources, { ...options, hotKeyLimit: 4 }, new Map(), byOldest))).toEqual([['crm/u0', 'crm/u1', 'crm/u2', 'crm/u3', 'crm/x', 'shop/u0']]);
  });

  it('keeps the oldest member id on union (the other is absorbed) and on split', () => {
    const a = contact('crm', 'a', { _email: 'a@x.com' }, 1);
    const b = contact('shop', 'b', { _email: 'b@x.com' }, 2);
    const bridge = contact('api', 'c', { _email: 'a@x.com', _phone_mobile: '0611111111' }, 3);
    const b2 = { ...b, attributes: { ...b.attributes, _phone_mobile: '0611111111' } };
    const previous = new Map([
      ['crm/a', 'A'],
      ['shop/b', 'B'],
    ]);
    const union = computeAudience([a, b2, bridge], sources, options, previous, byOldest);
    expect(union.audiences.map((x) => x.id)).toEqual(['A']);
    expect([...union.absorbed]).toEqual([['B', 'A']]);
    const split = computeAudience([a, b], sources, options, union.assignment, byOldest);
    expect(split.audiences.map((x) => x.id)).toEqual(['A', 'aud:shop/b']);
    expect(split.removed).toEqual([]);
    const gone = computeAudience([b], sources, options, new Map([['crm/a', 'A'], ['shop/b', 'A']]), byOldest);
    expect(gone.audiences.map((x) => x.id)).toEqual(['A']);
    expect(computeAudience([], sources, options, new Map([['crm/a', 'A']]), byOldest).removed).toEqual(['A']);
  });
});

// ---- properties ----------------------------------------------------------------

const emails = ['a@x.com', 'A@X.com ', 'b@x.com', 'c@x.com', 'null', ''];
const phones = ['0611111111', '+33611111111', '0622222222', '0', 'n/a'];
const names = ['Ann', 'Bob', 'Cid'];
const attrValue = <T>(pool: T[]) => fc.option(fc.constantFrom(...pool), { nil: null });

const op = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('upsert' as const),
      ds: fc.constantFrom('api', 'crm', 'shop'),
      user: fc.constantFrom('u1', 'u2', 'u3', 'u4', 'anonymous'),
      patch: fc.record(
        // custom attributes named like Object.prototype members merge as any other (ADR 0124)
        { _email: attrValue(emails), _phone_mobile: attrValue(phones), _first_name: attrValue(names), constructor: attrValue(names), toString: attrValue(names), valueOf: attrValue(names) },
        { requiredKeys: [] },
      ),
      minute: fc.integer({ min: 0, max: 59 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), ds: fc.constantFrom('api', 'crm', 'shop'), user: fc.constantFrom('u1', 'u2', 'u3', 'u4', 'anonymous') }) },
);

/** Small hot key limits (ADR 0350): with 15 contacts and a handful of values, keys turn hot and cool again. */
const hotKeyLimits = fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined });

type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;

/** One merge step per op, as a consumer without batching runs them. */
function runIncremental(ops: Op[], cap?: number, hotKeyLimit?: number) {
  return runBatched(ops, ops.map((_o, i) => i + 1), cap, hotKeyLimit);
}

/** The same ops, but merged in steps of several contacts (a consumer batch): `cuts` split the ops into steps. */
async function runBatched(ops: Op[], cuts: number[], cap?: number, hotKeyLimit?: number) {
  const state = new MemoryMergeState();
  let n = 0;
  const newId = () => `id${++n}`;
  const ends = [...new Set(cuts.map((c) => c % (ops.length + 1)))].sort((a, b) => a - b);
  let from = 0;
  for (const end of [...ends, ops.length]) {
    const refs = ops.slice(from, end).map((o) => (o.kind === 'upsert' ? state.upsert(o.ds, o.user, o.patch, `2026-01-01T00:${String(o.minute).padStart(2, '0')}:00Z`) : state.remove(o.ds, o.user)));
    from = Math.max(from, end);
    if (refs.length) state.apply(await planMerge(state, refs, sources, { ...options, cap, hotKeyLimit }, newId));
  }
  return state;
}

function canonical(audiences: Iterable<{ members: string[]; attributes: unknown; lineage: unknown; dataSources: string[]; dsContactIds: string[] }>) {
  return [...audiences]
    .map((a) => JSON.stringify({ members: [...a.members].sort(), attributes: a.attributes, lineage: a.lineage, dataSources: a.dataSources, dsContactIds: a.dsContactIds }))
    .sort();
}

/** The state equals a from-scratch merge of its live contacts, and its ids are stable. */
function expectScratchEqual(state: MemoryMergeState, cap: number | undefined, hotKeyLimit?: number) {
  const scratch = computeAudience([...state.sources.values()], sources, { ...options, cap, hotKeyLimit }, new Map(), byOldest);
  expect(canonical(state.audiences.values())).toEqual(canonical(scratch.audiences));
  // Every live contact is a member of exactly the audience that lists it.
  expect([...state.members.keys()].sort()).toEqual([...state.sources.keys()].sort());
  for (const [ref, id] of state.members) expect(state.audiences.get(id)!.members).toContain(ref);
  // Recomputing with the stored ids changes none of them (ids are stable).
  const again = computeAudience([...state.sources.values()], sources, { ...options, cap, hotKeyLimit }, state.members, byOldest);
  expect(again.absorbed.size).toBe(0);
  expect(again.removed).toEqual([]);
  expect(new Map(again.audiences.map((a) => [a.id, a]))).toEqual(state.audiences);
}

describe('merge properties', () => {
  it('the result does not depend on the order of the input', () => {
    fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 30 }), fc.integer({ min: 2, max: 6 }), fc.nat(), async (ops, cap, seed) => {
        const state = await runIncremental(ops, cap);
        const contacts = [...state.sources.values()];
        const shuffled = fc.sample(fc.shuffledSubarray(contacts, { minLength: contacts.length, maxLength: contacts.length }), { seed, numRuns: 1 })[0];
        const a = computeAudience(contacts, sources, { ...options, cap }, state.members, byOldest);
        const b = computeAudience(shuffled, sources, { ...options, cap }, state.members, byOldest);
        expect(b.audiences).toEqual(a.audiences);
        expect([...b.assignment].sort()).toEqual([...a.assignment].sort());
      }),
      { numRuns: 200 },
    );
  });

  it('the incremental audience equals a from-scratch recomputation of the final data', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), fc.option(fc.integer({ min: 2, max: 4 }), { nil: undefined }), hotKeyLimits, async (ops, cap, hotKeyLimit) => {
        const state = await runIncremental(ops, cap, hotKeyLimit);
        expectScratchEqual(state, cap, hotKeyLimit);
      }),
      { numRuns: 300 },
    );
  });

  it('merging several changed contacts per step also equals a from-scratch recomputation', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), fc.array(fc.nat(), { maxLength: 8 }), fc.option(fc.integer({ min: 2, max: 4 }), { nil: undefined }), hotKeyLimits, async (ops, cuts, cap, hotKeyLimit) => {
        const state = await runBatched(ops, cuts, cap, hotKeyLimit);
        expectScratchEqual(state, cap, hotKeyLimit);
      }),
      { numRuns: 300 },
    );
  });

  it('an absorbed id resolves to a live audience contact holding its oldest remaining members', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
        const state = await runIncremental(ops);
        for (const [absorbed] of state.aliases) {
          const target = state.resolve(absorbed);
          if (target !== undefined) expect(state.audiences.has(target)).toBe(true);
        }
      }),
      { numRuns: 100 },
    );
  });

  it('replaying a change is a no-op', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 30 }), async (ops) => {
        const state = await runIncremental(ops);
        const before = JSON.stringify([[...state.audiences].sort(), [...state.members].sort(), [...state.aliases].sort()]);
        const last = ops[ops.length - 1];
        const plan = await planMerge(state, [contactRef({ dataSourceId: last.ds, userId: last.user })], sources, options, () => 'never');
        state.apply(plan);
        expect(JSON.stringify([[...state.audiences].sort(), [...state.members].sort(), [...state.aliases].sort()])).toBe(before);
        expect(plan.result.absorbed.size).toBe(0);
      }),
      { numRuns: 100 },
    );
  });
});

describe('messaging contacts linked to a junk-id contact (ADR 0362)', () => {
  const [crm, shop, messaging] = ['11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222', '33333333-3333-4333-8333-333333333333'];
  const linkSources = new Map<string, DataSourceInfo>([
    [crm, { id: crm, priority: 10, isIngest: false }],
    [shop, { id: shop, priority: 0, isIngest: false }],
    [messaging, { id: messaging, priority: 0, isIngest: false, links: true }],
  ]);
  const linkOptions: MergeOptions = { ...options, linkSources: new Set([messaging]) };
  const link = `@member:${crm}/unknown`;

  it('merges the link with its member only, not with the other contacts of that junk id, and leaves the member its _user_id', () => {
    const r = computeAudience(
      [contact(crm, 'unknown', { _email: 'a@x.com' }, 1), contact(shop, 'unknown', { _email: 'b@x.com' }, 2), contact(messaging, link, { _consent_sms: 'opt-out' }, 3)],
      linkSources,
      linkOptions,
      new Map(),
      byOldest,
    );
    expect(partition(r)).toEqual([[`${crm}/unknown`, `${messaging}/${link}`], [`${shop}/unknown`]]);
    expect(r.audiences.find((a) => a.members.includes(`${crm}/unknown`))!.attributes).toMatchObject({ _user_id: 'unknown', _consent_sms: 'opt-out' });
  });

  it('honours the link only in the messaging data source', () => {
    const r = computeAudience([contact(crm, 'unknown', {}, 1), contact(shop, link, {}, 2)], linkSources, linkOptions, new Map(), byOldest);
    expect(r.audiences).toHaveLength(2);
  });

  it('a step from the link reaches a member merged before its key existed, and the link follows the member when it joins another contact', async () => {
    const state = new MemoryMergeState();
    let n = 0;
    const newId = () => `id${++n}`;
    const member = state.upsert(crm, 'unknown', { _email: 'a@x.com' }, '2026-01-01T00:00:00Z');
    state.apply(await planMerge(state, [member], linkSources, linkOptions, newId));
    state.keys.set(member, state.keys.get(member)!.filter((k) => k.attribute !== '@member'));
    const linked = state.upsert(messaging, link, { _consent_sms: 'opt-out' }, '2026-01-01T00:01:00Z');
    state.apply(await planMerge(state, [linked], linkSources, linkOptions, newId));
    expect(state.members.get(linked)).toBe(state.members.get(member));

    const older = state.upsert(shop, 's1', { _email: 'b@x.com' }, '2026-01-01T00:02:00Z');
    state.apply(await planMerge(state, [older], linkSources, linkOptions, newId));
    state.upsert(crm, 'unknown', { _email: 'b@x.com' }, '2026-01-01T00:03:00Z');
    state.apply(await planMerge(state, [member], linkSources, linkOptions, newId));
    expect(new Set([state.members.get(member), state.members.get(linked), state.members.get(older)]).size).toBe(1);
    expect(state.audiences.get(state.members.get(member)!)!.attributes._consent_sms).toBe('opt-out');
  });
});
