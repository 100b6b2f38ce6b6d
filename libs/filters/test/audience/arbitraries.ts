/**
 * fast-check generators of audience worlds (contacts, source contacts, events) and of filter
 * trees over TEST_CATALOGUE. Values come from small domains so that conditions often match:
 * a handful of letters (whose case folds the same in JS and in ClickHouse's lowerUTF8), small
 * numbers, and dates a few days around NOW written in several offsets.
 */
import fc from 'fast-check';
import { audienceOperatorsFor, audienceValueKind, type FilterCatalogue } from '../../src/audience';
import type { Scalar, World, WorldContact, WorldEvent, WorldSource } from './world';

const DAY = 86_400;
const LETTERS = ['a', 'b', 'A', 'B', 'é', 'É', ' ', '"', '\\', '\n', 'x'];

const WORDS = ['a', 'A', 'ab', 'AB', 'bA', 'é', 'Éa', 'x"\\', 'a\nb'];

export const text = (minLength = 0): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...WORDS) },
    { weight: 1, arbitrary: fc.array(fc.constantFrom(...LETTERS), { minLength, maxLength: 3 }).map((a) => a.join('')) },
  );
const number = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom(0.5, -1.5, 2.25));

/** An ISO date-time of `seconds` written with the given offset (minutes east of UTC). */
function isoWithOffset(seconds: number, offsetMinutes: number, fraction: boolean): string {
  const local = new Date((seconds + offsetMinutes * 60) * 1000).toISOString().slice(0, 19);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  const pad = (n: number) => String(n).padStart(2, '0');
  const suffix = offsetMinutes === 0 ? 'Z' : `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
  return `${local}${fraction ? '.5' : ''}${suffix}`;
}

/** Instants near `now`: whole days, quarter days and odd seconds a few days around it, and a few long ago. */
function instant(now: number): fc.Arbitrary<number> {
  return fc.oneof(
    fc.tuple(fc.constantFrom(-45, -40, -10, -3, -2, -1, 0, 1), fc.constantFrom(0, 6, 12, 18), fc.constantFrom(0, 1, -1)).map(([d, h, s]) => Math.floor(now / DAY) * DAY + d * DAY + h * 3600 + s),
    fc.constantFrom(now, now - DAY, now - 3 * DAY + 1, -631_152_000 /* 1950 */, 0),
  );
}

export const dateValue = (now: number): fc.Arbitrary<string> => instant(now).map((s) => new Date(s * 1000).toISOString().slice(0, 10));
export const dateTimeValue = (now: number): fc.Arbitrary<string> =>
  fc.tuple(instant(now), fc.constantFrom(0, 120, -330, 60), fc.boolean()).map(([s, o, f]) => isoWithOffset(s, o, f));
const anyDate = (now: number) => fc.oneof(dateValue(now), dateTimeValue(now));

function valueOf(type: string, now: number): fc.Arbitrary<Scalar> {
  switch (type) {
    case 'number':
      return number;
    case 'boolean':
      return fc.boolean();
    case 'date':
      return dateValue(now);
    case 'datetime':
      return dateTimeValue(now);
    default:
      return text();
  }
}

export function worldArbitrary(catalogue: FilterCatalogue, now: number): fc.Arbitrary<World> {
  const attributes = fc.record(
    Object.fromEntries(catalogue.attributes.map((a) => [a.uid, a.multivalue ? fc.array(valueOf(a.type, now), { maxLength: 3 }) : valueOf(a.type, now)])),
    { requiredKeys: [] },
  ) as fc.Arbitrary<Record<string, Scalar | Scalar[]>>;
  const eventParams = (uid: string) => {
    const type = catalogue.eventTypes.find((t) => t.uid === uid)!;
    return fc.record(
      Object.fromEntries(type.parameters.map((p) => [p.uid, (p.multiValue ?? 1) > 1 ? fc.oneof(fc.array(valueOf(p.dataType, now), { maxLength: 3 }), valueOf(p.dataType, now)) : valueOf(p.dataType, now)])),
      { requiredKeys: [] },
    ) as fc.Arbitrary<Record<string, unknown>>;
  };
  return fc.integer({ min: 5, max: 12 }).chain((n) => {
    const ids = Array.from({ length: n }, (_, i) => `c${i}`);
    const users = Array.from({ length: n + 2 }, (_, i) => `u${i}`);
    return fc
      .record({
        contacts: fc.tuple(...ids.map((id) => attributes.map((a): WorldContact => ({ id, attributes: a })))),
        // Source contacts u0…: most belong to a contact, some to none (deleted); u(n+1) has no membership at all.
        owners: fc.tuple(...users.slice(0, n + 1).map(() => fc.option(fc.constantFrom(...ids), { freq: 6 }))),
        events: fc.array(
          fc.tuple(fc.constantFrom(...users), fc.constantFrom('ds1', 'ds2'), fc.constantFrom(...catalogue.eventTypes.map((t) => t.uid)), instant(now)).chain(([user, ds, type, date]) =>
            eventParams(type).map((params) => ({ user, ds, type, date, params })),
          ),
          { minLength: 10, maxLength: 40 },
        ),
      })
      .map(({ contacts, owners, events }): World => {
        const sources: WorldSource[] = owners.flatMap((aid, i) => ['ds1', 'ds2'].map((ds) => ({ ds, user: users[i], aid })));
        return { contacts, sources, events: events.map((e, i): WorldEvent => ({ id: `e${i}`, ...e, date: Math.max(0, e.date) })) };
      });
  });
}

function conditionValues(kind: string, operator: string, now: number): fc.Arbitrary<unknown[]> {
  if (['is-set', 'is-not-set', 'is-true', 'is-false'].includes(operator)) return fc.constant([]);
  if (operator === 'in-last-days') return fc.constantFrom(1, 2, 3, 10, 30, 45).map((d) => [d]);
  if (operator === 'between') {
    const v = kind === 'date' ? anyDate(now) : number;
    return fc.tuple(v, v).map(([a, b]) => (kind === 'date' ? (Date.parse(String(a)) <= Date.parse(String(b)) ? [a, b] : [b, a]) : (a as number) <= (b as number) ? [a, b] : [b, a]));
  }
  if (['greater-than', 'less-than'].includes(operator)) return number.map((v) => [v]);
  if (['before-date', 'after-date'].includes(operator)) return anyDate(now).map((v) => [v]);
  if (operator === 'equals-number') return fc.array(number, { minLength: 1, maxLength: 3 });
  return fc.array(text(operator === 'matches-string' || operator === 'not-matches-string' ? 0 : 1), { minLength: 1, maxLength: 3 });
}

function condition(type: 'attribute_condition' | 'event_condition', key: string, dataType: string, now: number): fc.Arbitrary<object> {
  const kind = audienceValueKind(dataType);
  return fc.constantFrom(...audienceOperatorsFor(kind)).chain((operator) => conditionValues(kind, operator, now).map((values) => ({ type, key, operator, values })));
}

/** Random filter trees (JSON as a client sends it) over the catalogue; `condition`: one condition or group_event, no groups. */
export function filterArbitrary(catalogue: FilterCatalogue, now: number, shape: 'tree' | 'condition' = 'tree'): fc.Arbitrary<object> {
  const attributeCondition = fc.constantFrom(...catalogue.attributes).chain((a) => condition('attribute_condition', a.uid, a.type, now));
  const params = catalogue.eventTypes.flatMap((t) => t.parameters.map((p) => ({ type: t.uid, p })));
  const eventCondition = fc.constantFrom(...params).chain(({ type, p }) => condition('event_condition', `${type}.${p.uid}`, p.dataType, now));
  const timeframe = fc.oneof(
    fc.constantFrom(1, 3, 7, 30).map((lastDays) => ({ lastDays })),
    fc.tuple(fc.option(anyDate(now), { nil: undefined }), fc.option(anyDate(now), { nil: undefined })).map(([a, b]) => {
      const [from, to] = a && b && Date.parse(a) > Date.parse(b) ? [b, a] : [a, b];
      return from === undefined && to === undefined ? { lastDays: 10 } : { ...(from ? { from } : {}), ...(to ? { to } : {}) };
    }),
  );
  const groupEvent = fc.constantFrom(...catalogue.eventTypes).chain((t) =>
    fc.record(
      {
        type: fc.constant('group_event'),
        eventType: fc.constant(t.uid),
        timeframe,
        count: fc.record({ operator: fc.constantFrom('at-least', 'at-most', 'exactly'), value: fc.integer({ min: 0, max: 3 }) }),
        negate: fc.boolean(),
        children: t.parameters.length ? fc.array(fc.constantFrom(...t.parameters).chain((p) => condition('event_condition', `${t.uid}.${p.uid}`, p.dataType, now)), { maxLength: 2 }) : fc.constant([]),
      },
      { requiredKeys: ['type', 'eventType'] },
    ),
  );
  if (shape === 'condition') return fc.oneof(attributeCondition, eventCondition, groupEvent);
  const { tree } = fc.letrec<{ tree: object; group: object }>((tie) => ({
    tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, attributeCondition, eventCondition, groupEvent, tie('group')),
    group: fc.record(
      { type: fc.constant('group'), operator: fc.constantFrom('and', 'or'), negate: fc.boolean(), children: fc.array(tie('tree'), { maxLength: 3 }) },
      { requiredKeys: ['type', 'children'] },
    ),
  }));
  return tree;
}
