import { type ClickHouse, sampleBound, sql } from '../../libs/clickhouse/src';

/** 95% two-sided normal quantile (as apps/probes' estimators). */
const Z95 = 1.959964;

/** What a coverage answer says of one attribute (the fields the accuracy checks read). */
export interface CoverageAttributeAnswer {
  uid: string;
  fillRate: number;
  distinctValues: number | null;
  topValues?: Array<{ value: string | number | boolean; count: number; observedCount: number; reliable: boolean; countError: number }>;
}

export interface CoverageAnswer {
  denominator: { count: number };
  sampling: { applied: boolean; scanned: number; fraction?: number; band?: string };
  attributes: CoverageAttributeAnswer[];
}

/** The exact figures of every attribute over every current contact, from the key/value arrays (not the slot columns the probe reads). */
export interface Truth {
  contacts: number;
  filled: Map<string, number>;
  values: Map<string, Map<string, number>>;
}

export async function exactTruth(ch: ClickHouse, projectId: string): Promise<Truth> {
  const current = sql`FROM audience_contacts FINAL WHERE project_id = ${projectId} AND deleted = 0`;
  const [{ n }] = await ch.query<{ n: string }>(sql`SELECT count() AS n ${current}`);
  const filled = await ch.query<{ k: string; n: string }>(sql`SELECT k, count() AS n FROM (SELECT arrayJoin(arrayDistinct(arrayConcat(str_keys, num_keys))) AS k ${current}) GROUP BY k`);
  const pairs = sql`arrayConcat(arrayMap((k, v) -> (k, v), str_keys, str_values), arrayMap((k, v) -> (k, toString(v)), num_keys, num_values))`;
  const values = await ch.query<{ k: string; v: string; n: string }>(sql`SELECT kv.1 AS k, kv.2 AS v, count() AS n FROM (SELECT arrayJoin(arrayDistinct(${pairs})) AS kv ${current}) GROUP BY k, v`);
  const truth: Truth = { contacts: Number(n), filled: new Map(filled.map((r) => [r.k, Number(r.n)])), values: new Map() };
  for (const r of values) {
    const perValue = truth.values.get(r.k) ?? new Map<string, number>();
    perValue.set(r.v, Number(r.n));
    truth.values.set(r.k, perValue);
  }
  return truth;
}

export interface Accuracy {
  attributes: number;
  /** Largest |fillRate − true fill rate|, in points. */
  maxFillPoints: number;
  listedValues: number;
  /** Share of listed values whose true count lies inside count ± countError. */
  covered: number;
  /** Largest countError / textbook half-width z·N·sqrt(p̂(1 − p̂)/n). */
  maxErrorRatio: number;
  /** Largest |distinctValues − true| / true. */
  maxDistinctDeviation: number;
  /** Values observed 30 times or more yet flagged `reliable: false`. */
  unreliableAt30: number;
  denominatorExact: boolean;
}

/** The accuracy figures of one coverage answer against the exact truth. */
export function accuracyOf(answer: CoverageAnswer, truth: Truth): Accuracy {
  const n = answer.sampling.scanned;
  const N = answer.denominator.count;
  const out: Accuracy = { attributes: 0, maxFillPoints: 0, listedValues: 0, covered: 0, maxErrorRatio: 0, maxDistinctDeviation: 0, unreliableAt30: 0, denominatorExact: N === truth.contacts };
  let inside = 0;
  for (const a of answer.attributes) {
    const filled = truth.filled.get(a.uid) ?? 0;
    const values = truth.values.get(a.uid) ?? new Map<string, number>();
    if (filled === 0) continue;
    out.attributes++;
    out.maxFillPoints = Math.max(out.maxFillPoints, Math.abs(a.fillRate - filled / truth.contacts) * 100);
    if (a.distinctValues !== null) out.maxDistinctDeviation = Math.max(out.maxDistinctDeviation, Math.abs(a.distinctValues - values.size) / values.size);
    for (const t of a.topValues ?? []) {
      out.listedValues++;
      if (Math.abs(t.count - (values.get(String(t.value)) ?? 0)) <= t.countError) inside++;
      const p = t.observedCount / n;
      const textbook = Z95 * N * Math.sqrt((p * (1 - p)) / n);
      if (answer.sampling.applied && textbook > 0) out.maxErrorRatio = Math.max(out.maxErrorRatio, t.countError / textbook);
      if (!t.reliable && t.observedCount >= 30) out.unreliableAt30++;
    }
  }
  out.covered = out.listedValues ? inside / out.listedValues : Number.NaN;
  return out;
}

/** One line per figure, each with the bound and MET / MISSED. */
export function accuracyNotes(a: Accuracy): string[] {
  const verdict = (ok: boolean) => (ok ? 'MET' : 'MISSED');
  return [
    `accuracy over ${a.attributes} filled attributes: fill rate within ±1 point: max ${a.maxFillPoints.toFixed(3)} points ${verdict(a.maxFillPoints <= 1)}`,
    `true count inside countError for ≥ 95% of the ${a.listedValues} listed values: ${(a.covered * 100).toFixed(1)}% ${verdict(a.covered >= 0.95)}`,
    `countError ≤ 3× the textbook half-width: max ${a.maxErrorRatio.toFixed(2)}× ${verdict(a.maxErrorRatio <= 3)}`,
    `distinctValues within ±2%: max ${(a.maxDistinctDeviation * 100).toFixed(2)}% ${verdict(a.maxDistinctDeviation <= 0.02)}`,
    `reliable: false at ≥ 30 observed: ${a.unreliableAt30} ${verdict(a.unreliableAt30 === 0)}; denominator ${a.denominatorExact ? 'exact' : 'NOT exact'}`,
  ];
}

/** What a volumes answer with `event` says of its parameter values (the fields the accuracy checks read). */
export interface EventAnswer {
  window: { from: string; to: string };
  event: {
    sampling: { applied: boolean; buckets: number; scanned: number; population: number };
    parameters: Array<{ uid: string; values?: Array<{ value: string; count: number; observedContacts: number; reliable: boolean; countError: number }> }>;
  };
}

/** Per parameter and value of one event type: the true events over every contact, and over the sampled contacts Σn and Σn² of the per-contact events. */
type EventTruth = Map<string, { events: number; sampled: number; squares: number }>;

export async function exactEventTruth(ch: ClickHouse, projectId: string, eventType: string, answer: EventAnswer): Promise<EventTruth> {
  const [from, to] = [answer.window.from, answer.window.to].map((t) => Math.floor(Date.parse(t) / 1000));
  const members = sql`SELECT data_source_id, user_id, audience_id AS aid FROM audience_membership FINAL WHERE project_id = ${projectId} AND deleted = 0`;
  const events = sql`SELECT aid, event_id, param_keys, param_values FROM (SELECT data_source_id, user_id, event_id, param_keys, param_values FROM events WHERE project_id = ${projectId} AND event_type = ${eventType} AND event_date >= toDateTime(${from}) AND event_date <= toDateTime(${to})) ANY INNER JOIN (${members}) USING (data_source_id, user_id)`;
  const pairs = sql`arrayJoin(arrayMap((k, v) -> (k, substring(v, 2, length(v) - 2)), param_keys, param_values))`;
  const perContact = sql`SELECT aid, p.1 AS parameter, p.2 AS value, uniqExact(event_id) AS n FROM (SELECT aid, event_id, ${pairs} AS p FROM (${events})) GROUP BY aid, parameter, value`;
  const sampled = answer.event.sampling.applied ? sql`cityHash64(aid) < ${sampleBound(answer.event.sampling.buckets)}` : sql`1`;
  const rows = await ch.query<{ parameter: string; value: string; events: string; sampled: string; squares: string }>(
    sql`SELECT parameter, value, sum(n) AS events, sumIf(n, ${sampled}) AS sampled, sumIf(n * n, ${sampled}) AS squares FROM (${perContact}) GROUP BY parameter, value`,
  );
  return new Map(rows.map((r) => [`${r.parameter}\u0000${r.value}`, { events: Number(r.events), sampled: Number(r.sampled), squares: Number(r.squares) }]));
}

export interface EventAccuracy {
  listedValues: number;
  /** Share of listed values whose true events lie inside count ± countError. */
  covered: number;
  /** Largest countError / textbook half-width of a total from a sample of contacts, z·N·sqrt((1 − n/N)·s²/n), s² of the per-contact events. */
  maxErrorRatio: number;
  /** Values held by 30 sampled contacts or more yet flagged `reliable: false`. */
  unreliableAt30: number;
}

/** The accuracy figures of the parameter values of one volumes answer with `event` against the exact truth (ADR 0247). */
export function eventAccuracyOf(answer: EventAnswer, truth: EventTruth): EventAccuracy {
  const { scanned: n, population: N, applied } = answer.event.sampling;
  const out: EventAccuracy = { listedValues: 0, covered: 0, maxErrorRatio: 0, unreliableAt30: 0 };
  let inside = 0;
  for (const p of answer.event.parameters) {
    for (const v of p.values ?? []) {
      const t = truth.get(`${p.uid}\u0000${v.value}`) ?? { events: 0, sampled: 0, squares: 0 };
      out.listedValues++;
      if (Math.abs(v.count - t.events) <= v.countError) inside++;
      const mean = t.sampled / n;
      const variance = (t.squares - n * mean * mean) / (n - 1);
      const textbook = Z95 * N * Math.sqrt((Math.max(0, 1 - n / N) * variance) / n);
      if (applied && textbook > 0) out.maxErrorRatio = Math.max(out.maxErrorRatio, v.countError / textbook);
      if (!v.reliable && v.observedContacts >= 30) out.unreliableAt30++;
    }
  }
  out.covered = out.listedValues ? inside / out.listedValues : Number.NaN;
  return out;
}

export function eventAccuracyNotes(eventType: string, a: EventAccuracy): string[] {
  const verdict = (ok: boolean) => (ok ? 'MET' : 'MISSED');
  return [
    `event "${eventType}" parameter values: true events inside countError for ${(a.covered * 100).toFixed(1)}% of the ${a.listedValues} listed values ${verdict(a.covered >= 0.95)}; countError ≤ 3× the textbook clustered half-width: max ${a.maxErrorRatio.toFixed(2)}× ${verdict(a.maxErrorRatio <= 3)}; reliable: false at ≥ 30 contacts: ${a.unreliableAt30} ${verdict(a.unreliableAt30 === 0)}`,
  ];
}
