import { sampleBound, samplingPlan } from '@meld/clickhouse';
import { type ClickHouse, join, raw, sql, type Sql } from '../../libs/clickhouse/src';

/**
 * The probes bench's baselines: the ClickHouse queries one would write by hand, knowing the data,
 * for the figures a coverage or volumes answer holds (slot columns read directly, no filter
 * compiler, no split branches), run one after the other as the probe runs its own.
 */

export interface PlainAttribute {
  uid: string;
  type: string;
  multivalue: boolean;
  slot: number | null;
}

const isNumber = (a: PlainAttribute) => a.type !== 'string' && a.type !== 'email' && a.type !== 'phone';

/** The attribute's values on a row: its slot column when it has one, else its entries of the arrays. */
function values(a: PlainAttribute): { present: Sql; list: Sql } {
  const [number, keys, vals] = [isNumber(a), raw(isNumber(a) ? 'num_keys' : 'str_keys'), raw(isNumber(a) ? 'num_values' : 'str_values')];
  if (a.slot !== null && !a.multivalue) {
    const present = sql`bitAnd(${raw(number ? 'num_slots' : 'str_slots')}, ${2 ** a.slot}) != 0`;
    return { present, list: sql`if(${present}, [${raw(`${number ? 'n' : 's'}${a.slot}`)}], ${raw(number ? 'emptyArrayFloat64()' : 'emptyArrayString()')})` };
  }
  return { present: sql`has(${keys}, ${a.uid})`, list: sql`arrayFilter((v, k) -> k = ${a.uid}, ${vals}, ${keys})` };
}

export function plainCoverage(ch: ClickHouse, o: { projectId: string; attributes: readonly PlainAttribute[]; contacts: number }) {
  const plan = samplingPlan(o.contacts);
  const current = sql`FROM audience_contacts FINAL WHERE project_id = ${o.projectId} AND deleted = 0`;
  const sampled = plan.applied ? sql`${current} AND audience_hash < ${sampleBound(plan.buckets)}` : current;
  const attrs = o.attributes.map((a, i) => ({ a, i, v: values(a) }));
  return {
    async run(): Promise<void> {
      await ch.query(sql`SELECT count() AS contacts, ${join(attrs.map(({ i, v }) => sql`uniqCombinedArray(${v.list}) AS ${raw(`d${i}`)}`))} ${current}`);
      const figures = attrs.flatMap(({ a, i, v }) => [sql`countIf(${v.present}) AS ${raw(`f${i}`)}`, ...(isNumber(a) ? [sql`avgArray(${v.list}) AS ${raw(`avg${i}`)}`] : [])]);
      await ch.query(sql`SELECT count() AS scanned, ${join(figures)} ${sampled}`);
      const pairs = attrs.map(({ i, v }) => sql`arrayMap(x -> (toUInt16(${i}), toString(x)), arrayDistinct(${v.list}))`);
      const top = await ch.query<{ a: number; value: string }>(
        sql`SELECT pair.1 AS a, pair.2 AS value, count() AS n FROM (SELECT arrayJoin(arrayConcat(${join(pairs)})) AS pair ${sampled}) GROUP BY a, value ORDER BY a, n DESC, value LIMIT 10 BY a`,
      );
      const multivalue = attrs.filter(({ a }) => a.multivalue);
      if (!multivalue.length) return;
      const other = multivalue.map(({ i, v }) => {
        const listed = top.filter((t) => Number(t.a) === i).map((t) => t.value);
        return sql`countIf(arrayExists(x -> NOT has([${join(listed.length ? listed : [''])}], x), ${v.list})) AS ${raw(`o${i}`)}`;
      });
      await ch.query(sql`SELECT ${join(other)} ${sampled}`);
    },
  };
}

/** A JSON string parameter's text (the bench writes plain strings without escapes). */
const param = (name: string) => sql`substring(param_values[indexOf(param_keys, ${name})], 2, length(param_values[indexOf(param_keys, ${name})]) - 2)`;

export function plainVolumes(ch: ClickHouse, o: { projectId: string; types: readonly string[]; from: number; to: number; probed?: string }) {
  const window = sql`event_date >= toDateTime(${o.from}) AND event_date <= toDateTime(${o.to})`;
  const counts = async (): Promise<Map<string, number>> => {
    // The audience's size picks the default window and the sampling band.
    await ch.query(sql`SELECT count() FROM audience_contacts FINAL WHERE project_id = ${o.projectId} AND deleted = 0`);
    const rows = await ch.query<{ t: string; n: string }>(sql`SELECT event_type AS t, uniqExact(event_id) AS n, max(event_date) AS last FROM events WHERE project_id = ${o.projectId} AND event_type IN (${join([...o.types])}) AND ${window} GROUP BY event_type`);
    return new Map(rows.map((r) => [r.t, Number(r.n)]));
  };
  return {
    counts,
    async withEvent(): Promise<void> {
      const [{ n }] = await ch.query<{ n: string }>(sql`SELECT count() AS n FROM audience_contacts FINAL WHERE project_id = ${o.projectId} AND deleted = 0`);
      await counts();
      const plan = samplingPlan(Number(n));
      const members = sql`SELECT data_source_id, user_id, audience_id AS aid FROM audience_membership FINAL WHERE project_id = ${o.projectId} AND deleted = 0${plan.applied ? sql` AND cityHash64(audience_id) < ${sampleBound(plan.buckets)}` : raw('')}`;
      const events = sql`SELECT aid, event_id, param_keys, param_values FROM (SELECT data_source_id, user_id, event_id, param_keys, param_values FROM events WHERE project_id = ${o.projectId} AND event_type = ${o.probed!} AND ${window}) ANY INNER JOIN (${members}) USING (data_source_id, user_id)`;
      const perContact = sql`SELECT aid, p.1 AS parameter, p.2 AS value, uniqExact(event_id) AS n FROM (SELECT aid, event_id, arrayJoin([('channel', ${param('channel')}), ('product_id', ${param('product_id')}), ('product_name', ${param('product_name')})]) AS p FROM (${events})) GROUP BY aid, parameter, value`;
      // Every value's events, Σn² and contacts (the client keeps the top ten and sums the totals), then each listed id's name.
      const all = await ch.query<{ parameter: string; value: string; events: string }>(sql`SELECT parameter, value, sum(n) AS events, sum(n * n) AS squares, count() AS contacts FROM (${perContact}) GROUP BY parameter, value ORDER BY parameter, events DESC, value`);
      const ids = all.filter((r) => r.parameter === 'product_id').slice(0, 10).map((r) => r.value);
      await ch.query(sql`SELECT id, name, count() AS c FROM (SELECT ${param('product_id')} AS id, ${param('product_name')} AS name FROM (${events}) WHERE has([${join(ids.length ? ids : [''])}], id)) GROUP BY id, name ORDER BY id, c DESC, name LIMIT 1 BY id`);
    },
  };
}
