/**
 * The audience data of the ClickHouse benches (audience-count, audience-lists): contacts generated
 * inside ClickHouse (INSERT … SELECT FROM numbers) with the noise a real snapshot has, 5% stale
 * versions and 1% tombstones, written as the probes sink writes them.
 */
import { raw, sql, type ClickHouse, type Sql } from '../../libs/clickhouse/src';
import type { FilterCatalogue } from '../../libs/filters/src';

export const PROJECT = 'bench-project';
export const DAY = 86_400;
export const CITIES = ['Paris', 'Lyon', 'Marseille', 'Toulouse', 'Nice', 'Nantes', 'Strasbourg', 'Montpellier', 'Bordeaux', 'Lille', ...Array.from({ length: 40 }, (_, i) => `Town ${i}`)];
export const PLANS = ['free', 'starter', 'pro', 'enterprise'];
export const TAGS = Array.from({ length: 20 }, (_, i) => `tag-${i}`);
export const EVENT_TYPES = ['purchase', 'page_view', 'login', 'add_to_cart', 'email_open', 'email_click', 'sms_delivered', 'search', 'signup', 'logout'];
export const SKUS = Array.from({ length: 20 }, (_, i) => `SKU-${i * 7}`);

// Slots as Postgres gives them to a project's attributes in creation order (attributes.slot).
export const CATALOGUE: FilterCatalogue = {
  attributes: [
    { uid: 'city', type: 'string', multivalue: false, slot: 0 },
    { uid: 'plan', type: 'string', multivalue: false, slot: 1 },
    { uid: '_email', type: 'email', multivalue: false, slot: 2 },
    { uid: 'tags', type: 'string', multivalue: true, slot: null },
    { uid: 'score', type: 'number', multivalue: false, slot: 0 },
    { uid: 'vip', type: 'boolean', multivalue: false, slot: 1 },
    { uid: 'signup', type: 'date', multivalue: false, slot: 2 },
  ],
  eventTypes: EVENT_TYPES.map((uid) => ({
    uid,
    parameters: uid === 'purchase' ? [{ uid: 'amount', dataType: 'number' }, { uid: 'product-id', dataType: 'string' }] : [{ uid: 'url', dataType: 'string' }],
  })),
};

export const sqlList = (items: readonly string[]): Sql => sql`${[...items]}`;

/** −1 rows the generated snapshot holds while unmerged: one per stale state and per deletion. */
export function snapshotCancellations(contacts: number): number {
  return Math.floor((contacts - 1) / 20) + 1 + (contacts > 7 ? Math.floor((contacts - 8) / 100) + 1 : 0);
}

/**
 * Contacts `a0` … `a<contacts-1>` in audience_snapshot (and, with `withContactsTable`, in
 * audience_contacts, the table read with FINAL before ADR 0243). Stop the snapshot's merges first
 * to keep its noise unmerged.
 */
export async function writeAudienceContacts(ch: ClickHouse, contacts: number, now: number, withContactsTable: boolean): Promise<void> {
  // The slot columns (s0-s2, n0-n2, all three present in the masks) hold the single-valued attributes' values as the sink writes them.
  // `sign` only for audience_snapshot, the collapsing twin (ADR 0223).
  const contactRows = (version: number, where: Sql, shift: number, sign?: 1 | -1) => sql`
    INSERT INTO ${raw(sign ? 'audience_snapshot' : 'audience_contacts')} (project_id, audience_id, version, deleted, str_keys, str_values, num_keys, num_values, channels, updated_at, s0, s1, s2, n0, n1, n2, str_slots, num_slots${raw(sign ? ', sign' : '')})
    SELECT project_id, audience_id, version, deleted, str_keys, str_values, num_keys, num_values, channels, updated_at,
           str_values[1], str_values[2], str_values[3], num_values[1], num_values[2], num_values[3], 7, 7${sign ? sql`, toInt8(${sign})` : raw('')}
    FROM (SELECT ${PROJECT} AS project_id, concat('a', toString(number)) AS audience_id, toUInt64(${version}) AS version, toUInt8(0) AS deleted,
      arrayConcat(['city', 'plan', '_email'], arrayMap(i -> 'tags', range(number % 4))) AS str_keys,
      arrayConcat([${sqlList(CITIES)}[(number + ${shift}) % ${CITIES.length} + 1], ${sqlList(PLANS)}[intHash32(number + ${shift}) % 4 + 1], concat('user', toString(number), '@Example.com')],
                  arrayMap(i -> ${sqlList(TAGS)}[(number + i * 7) % 20 + 1], range(number % 4))) AS str_values,
      ['score', 'vip', 'signup'] AS num_keys,
      [toFloat64(intHash32(number + ${shift}) % 1000), toFloat64(intHash32(number + 1 + ${shift}) % 2), toFloat64(${now} - (number % 1000) * ${DAY})] AS num_values,
      ['sms'] AS channels, toDateTime(${now}) AS updated_at
    FROM numbers(${contacts}) WHERE ${where})`;
  const tombstones = (sign?: 1) => sql`
    INSERT INTO ${raw(sign ? 'audience_snapshot' : 'audience_contacts')} (project_id, audience_id, version, deleted, str_keys, str_values, num_keys, num_values, channels, updated_at${raw(sign ? ', sign' : '')})
    SELECT ${PROJECT}, concat('a', toString(number)), 3, 1, [], [], [], [], [], toDateTime(${now})${sign ? sql`, toInt8(${sign})` : raw('')} FROM numbers(${contacts}) WHERE number % 100 = 7`;
  // Stale versions first (an older part), then the current snapshot, then tombstones.
  if (withContactsTable) {
    await ch.command(contactRows(1, sql`number % 20 = 0`, 17));
    await ch.command(contactRows(2, sql`1`, 0));
    await ch.command(tombstones());
  }
  // The same history as the sink writes it to the collapsing snapshot, one insert (part) per
  // step: the stale states, their cancellation with the current ones, the deletions cancelling
  // those. Merges are stopped on it (run): the noise stays unmerged while the counts are timed.
  await ch.command(contactRows(1, sql`number % 20 = 0`, 17, 1));
  await ch.command(contactRows(1, sql`number % 20 = 0`, 17, -1));
  await ch.command(contactRows(2, sql`1`, 0, 1));
  await ch.command(contactRows(2, sql`number % 100 = 7`, 0, -1));
  await ch.command(tombstones(1));
}

/**
 * `events` events over the last 365 days, uniformly over the source contacts (`ds2` for 1 in 11);
 * 10 types, purchases with an amount and one of 1,000 products. `progress` gets the count written.
 */
export async function writeEvents(ch: ClickHouse, contacts: number, events: number, now: number, progress: (written: number) => void): Promise<void> {
  const chunk = 2_000_000;
  for (let offset = 0; offset < events; offset += chunk) {
    await ch.command(sql`
      INSERT INTO events (project_id, data_source_id, user_id, event_id, event_type, event_date, received_at, param_keys, param_values)
      SELECT ${PROJECT}, if(h % 11 = 0, 'ds2', 'ds1'), concat('u', toString(if(h % 11 = 0, (h % ${Math.ceil(contacts / 10)}) * 10, h % ${contacts}))),
             lower(hex(MD5(toString(number)))), t, toDateTime(${now} - cityHash64(number, 3) % ${365 * DAY}) AS d, d,
             if(t = 'purchase', ['amount', 'product-id'], ['url']),
             if(t = 'purchase', [toString(cityHash64(number, 4) % 500), concat('"SKU-', toString(cityHash64(number, 5) % 1000), '"')], [concat('"/p/', toString(number % 997), '"')])
      FROM (SELECT number, intHash64(number) AS h, ${sqlList(EVENT_TYPES)}[cityHash64(number, 2) % ${EVENT_TYPES.length} + 1] AS t FROM numbers(${offset}, ${Math.min(chunk, events - offset)}))`);
    progress(Math.min(offset + chunk, events));
  }
}

/**
 * The membership of the events' source contacts (`u<n>` of `ds1` in `a<n>`; `ds2`'s `u<n>`, every
 * tenth, in `a<n>` too), as the probes sink writes audience_membership: what an audience filter
 * over events goes through.
 */
export async function writeMembership(ch: ClickHouse, contacts: number): Promise<void> {
  await ch.command(sql`
    INSERT INTO audience_membership (project_id, data_source_id, user_id, audience_id, version, deleted)
    SELECT ${PROJECT}, ds, concat('u', toString(number)), concat('a', toString(number)), 1, 0
      FROM numbers(${contacts}) ARRAY JOIN if(number % 10 = 0, ['ds1', 'ds2'], ['ds1']) AS ds`);
}
