import { type ClickHouse, join, raw, sql, type Sql } from '../../libs/clickhouse/src';
import { AttributeEntity, EventParameterEntity, EventTypeEntity } from '../../libs/db/src';
import type { DataSource } from 'typeorm';

/**
 * The probes bench's audience and events: every value is a function of the contact's number and
 * the attribute's position (cityHash64), generated inside ClickHouse, so a million contacts take
 * seconds and the distributions are known by construction. The realised truth (what the probe is
 * compared with) is counted exactly over every contact by bench/lib/probes-truth.ts.
 */

export type AttributeShape = 'skewed' | 'uniform' | 'multivalue' | 'sparse' | 'number';
const SHAPES: readonly AttributeShape[] = ['skewed', 'uniform', 'multivalue', 'sparse', 'number'];
const FILL_RATES = [0.95, 0.8, 0.6, 0.4];
/** Multivalue tags: tag k is held by a contact with probability TAG_PER_MILLE[k] / 1000, independently. */
const TAG_PER_MILLE = [600, 300, 200, 150, 120, 100, 85, 75];

export interface BenchAttribute {
  uid: string;
  shape: AttributeShape;
  type: 'string' | 'number';
  multivalue: boolean;
  /** Share of contacts filled (multivalue: whoever holds a tag). */
  fill: number;
  /** Postgres' slot (set once inserted). */
  slot: number | null;
}

/** `count` attributes cycling over the five shapes and four fill rates (`skewed_00`, `uniform_01`, …: names rule 7 does not withhold). */
export function benchAttributes(count: number): BenchAttribute[] {
  return Array.from({ length: count }, (_, i) => {
    const shape = SHAPES[i % SHAPES.length];
    return {
      uid: `${shape}_${String(i).padStart(2, '0')}`,
      shape,
      type: shape === 'number' ? 'number' : 'string',
      multivalue: shape === 'multivalue',
      fill: shape === 'sparse' ? 0.02 : FILL_RATES[Math.floor(i / SHAPES.length) % FILL_RATES.length],
      slot: null,
    };
  });
}

/** The attribute's values for contact `number` (an Array of String or Float64), salted by `salt` (stale versions use another). */
function valuesOf(a: BenchAttribute, i: number, salt: number): Sql {
  const h = (...extra: number[]) => raw(`cityHash64(number, ${i + salt}${extra.map((e) => `, ${e}`).join('')})`);
  const filled = sql`${h(1)} % 10000 < ${Math.round(a.fill * 10_000)}`;
  switch (a.shape) {
    // Zipf-like over 200 values: P(v_k) = log((k + 2) / (k + 1)) / log 200.
    case 'skewed':
      return sql`if(${filled}, [concat('v', toString(toUInt32(floor(pow(200, (${h()} % 1000000) / 1000000.)) - 1)))], emptyArrayString())`;
    case 'uniform':
      return sql`if(${filled}, [concat('u', toString(${h()} % ${5 + (i % 4) * 5}))], emptyArrayString())`;
    case 'multivalue':
      return sql`arrayMap(k -> concat('t', toString(k)), arrayFilter(k -> cityHash64(number, ${i + salt}, k) % 1000 < [${join(TAG_PER_MILLE)}][k + 1], range(${TAG_PER_MILLE.length})))`;
    case 'sparse':
      return sql`if(${filled}, [['x', 'y', 'z'][if(${h()} % 10 < 5, 1, if(${h()} % 10 < 8, 2, 3))]], emptyArrayString())`;
    case 'number':
      return sql`if(${filled}, [toFloat64(1 + ${h()} % 20)], emptyArrayFloat64())`;
  }
}

/** Inserts the attributes (Postgres gives them slots) and returns them with their slot. */
export async function declareAttributes(db: DataSource, projectId: string, attributes: BenchAttribute[]): Promise<BenchAttribute[]> {
  await db.getRepository(AttributeEntity).insert(attributes.map((a) => ({ projectId, uid: a.uid, label: a.uid, type: a.type, multivalue: a.multivalue })));
  return withSlots(db, projectId, attributes);
}

/** The attributes with the slots Postgres gave them (a --reuse run reads them back). */
export async function withSlots(db: DataSource, projectId: string, attributes: BenchAttribute[]): Promise<BenchAttribute[]> {
  const rows: Array<{ uid: string; slot: number | null }> = await db.query(`SELECT uid, slot FROM attributes WHERE project_id = $1`, [projectId]);
  const slots = new Map(rows.map((r) => [r.uid, r.slot]));
  return attributes.map((a) => ({ ...a, slot: slots.get(a.uid) ?? null }));
}

/**
 * Contacts a0 … a(N−1) of `projectId`, as the probes sink writes them (arrays, slot columns and
 * masks), with the noise a real snapshot holds: 5% stale versions in an older part, 1% tombstones;
 * and audience_snapshot, the collapsing twin, as the sink writes it (ADR 0223).
 */
export async function seedContacts(ch: ClickHouse, projectId: string, dataSourceId: string, attributes: readonly BenchAttribute[], contacts: number, now: number): Promise<void> {
  const kinds = { str: attributes.filter((a) => a.type === 'string'), num: attributes.filter((a) => a.type === 'number') };
  const column = (a: BenchAttribute) => raw(`c${attributes.indexOf(a)}`);
  const keys = (list: BenchAttribute[]) => (list.length ? sql`arrayConcat(${join(list.map((a) => sql`arrayMap(x -> ${a.uid}, ${column(a)})`))})` : sql`emptyArrayString()`);
  const values = (list: BenchAttribute[], empty: Sql) => (list.length ? sql`arrayConcat(${join(list.map(column))})` : empty);
  const slotted = attributes.filter((a) => a.slot !== null && !a.multivalue);
  const slotColumns = slotted.map((a) => raw(`${a.type === 'string' ? 's' : 'n'}${a.slot}`));
  const mask = (list: BenchAttribute[]) => {
    const bits = list.filter((a) => slotted.includes(a)).map((a) => sql`notEmpty(${column(a)}) * ${2 ** a.slot!}`);
    return bits.length ? sql`toUInt32(${join(bits, ' + ')})` : sql`toUInt32(0)`;
  };
  // `sign` only for audience_snapshot, the collapsing twin (ADR 0223).
  const rows = (version: number, salt: number, where: Sql, sign?: 1 | -1) => {
    const perAttribute = attributes.map((a, i) => sql`${valuesOf(a, i, salt)} AS ${column(a)}`);
    return sql`
      INSERT INTO ${raw(sign ? 'audience_snapshot' : 'audience_contacts')} (project_id, audience_id, version, deleted, str_keys, str_values, num_keys, num_values, channels, updated_at${slotColumns.length ? sql`, ${join(slotColumns)}` : raw('')}, str_slots, num_slots${raw(sign ? ', sign' : '')})
      SELECT ${projectId}, concat('a', toString(number)), toUInt64(${version}), toUInt8(0), ${keys(kinds.str)}, ${values(kinds.str, sql`emptyArrayString()`)}, ${keys(kinds.num)}, ${values(kinds.num, sql`emptyArrayFloat64()`)},
             ['sms'], toDateTime(${now})${slotted.length ? sql`, ${join(slotted.map((a) => sql`${column(a)}[1]`))}` : raw('')}, ${mask(kinds.str)}, ${mask(kinds.num)}${sign ? sql`, toInt8(${sign})` : raw('')}
      FROM (SELECT number, ${join(perAttribute)} FROM numbers(${contacts}) WHERE ${where})`;
  };
  const tombstones = (table: string, sign?: 1) => sql`
    INSERT INTO ${raw(table)} (project_id, audience_id, version, deleted, str_keys, str_values, num_keys, num_values, channels, updated_at${raw(sign ? ', sign' : '')})
    SELECT ${projectId}, concat('a', toString(number)), 3, 1, [], [], [], [], [], toDateTime(${now})${sign ? sql`, toInt8(${sign})` : raw('')} FROM numbers(${contacts}) WHERE number % 100 = 7`;
  await ch.command(rows(1, 1000, sql`number % 20 = 0`));
  await ch.command(rows(2, 0, sql`1`));
  await ch.command(tombstones('audience_contacts'));
  // The same history as the sink writes it to the snapshot, one insert (part) per step: the stale
  // states, their cancellation with the current ones, then the deletions cancelling those.
  await ch.command(rows(1, 1000, sql`number % 20 = 0`, 1));
  await ch.command(rows(1, 1000, sql`number % 20 = 0`, -1));
  await ch.command(rows(2, 0, sql`1`, 1));
  await ch.command(rows(2, 0, sql`number % 100 = 7`, -1));
  await ch.command(tombstones('audience_snapshot', 1));
  // One source contact u<n> of the data source per audience contact a<n>.
  await ch.command(sql`
    INSERT INTO audience_membership (project_id, data_source_id, user_id, audience_id, version, deleted)
    SELECT ${projectId}, ${dataSourceId}, concat('u', toString(number)), concat('a', toString(number)), 1, 0 FROM numbers(${contacts})`);
}

/** The id / name pair (probe rule 13) and a third parameter live on `purchase`; every other type has one `source`. */
export const PROBED_EVENT = 'purchase';
const PURCHASE_PARAMETERS = ['channel', 'product_id', 'product_name'];

/** The uids of `count` event types in volume order (the first is the commonest): the tenant's `page_view`, `purchase`, then `type_02` …. */
export const eventTypeUids = (count: number): string[] =>
  ['page_view', PROBED_EVENT, ...Array.from({ length: Math.max(0, count - 2) }, (_, i) => `type_${String(i + 2).padStart(2, '0')}`)].slice(0, count);

/** Declares the `count` event types of eventTypeUids with their parameters; returns their uids. */
export async function declareEventTypes(db: DataSource, projectId: string, count: number): Promise<string[]> {
  const uids = eventTypeUids(count);
  const types = db.getRepository(EventTypeEntity);
  const parameters = db.getRepository(EventParameterEntity);
  for (const uid of uids) {
    const type = (await types.findOneBy({ projectId, uid })) ?? (await types.save({ projectId, uid, name: uid, category: 'contact_behaviour' }));
    const names = uid === PROBED_EVENT ? PURCHASE_PARAMETERS : ['source'];
    await parameters.insert(names.map((parameter) => ({ eventTypeId: type.id, parameter, title: parameter, dataType: 'string' })));
  }
  return uids;
}

/**
 * `events` events over the last `days` days: types Zipf-like (P(type k) = log((k + 1) / k) / log 21),
 * source contacts skewed (contact ⌊u²·N⌋: a few contacts have many events, which the clustered error
 * bars of parameter values must absorb), purchases over 500 products (Zipf-like) with their names.
 */
export async function seedEvents(ch: ClickHouse, projectId: string, dataSourceId: string, types: readonly string[], contacts: number, events: number, now: number, days: number, log: (m: string) => void): Promise<void> {
  const started = Date.now();
  const chunk = 2_000_000;
  for (let offset = 0; offset < events; offset += chunk) {
    await ch.command(sql`
      INSERT INTO events (project_id, data_source_id, user_id, event_id, event_type, event_date, received_at, param_keys, param_values)
      SELECT ${projectId}, ${dataSourceId}, concat('u', toString(toUInt64(pow((cityHash64(number, 11) % 1000000) / 1000000., 2) * ${contacts}))),
             lower(hex(MD5(toString(number)))), t, toDateTime(${now} - cityHash64(number, 3) % ${days * 86_400}) AS d, d,
             if(t = ${PROBED_EVENT}, [${join(PURCHASE_PARAMETERS)}], ['source']),
             if(t = ${PROBED_EVENT}, [concat('"', ['web', 'app', 'store'][cityHash64(number, 5) % 3 + 1], '"'), concat('"P-', toString(p), '"'), concat('"Product ', toString(p), '"')],
                [concat('"s', toString(cityHash64(number, 6) % 5), '"')])
      FROM (SELECT number, [${join([...types])}][toUInt32(floor(pow(${types.length + 1}, (cityHash64(number, 2) % 1000000) / 1000000.)))] AS t,
                   toUInt32(floor(pow(500, (cityHash64(number, 4) % 1000000) / 1000000.))) - 1 AS p
            FROM numbers(${offset}, ${Math.min(chunk, events - offset)}))`);
    log(`events: ${Math.min(offset + chunk, events).toLocaleString('en-US')} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
}
