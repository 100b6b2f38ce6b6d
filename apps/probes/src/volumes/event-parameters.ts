import type { ContactDataView } from '@meld/auth';
import type { SamplingPlan, Sql } from '@meld/clickhouse';
import type { AttributeType } from '@meld/contracts';
import { valueKindOf } from '@meld/filters';
import { decodeValue } from '../coverage/coverage-entry';
import { MAX_DISTINCT_FOR_TOP_VALUES, TOP_VALUES_OMITTED, nameReason } from '../coverage/top-values-policy';
import { estimateTotal } from '../shared/estimators';
import type { ProbeReads } from '../shared/probe-reads';
import { pairParameters } from './parameter-pairs';
import type { EventParameterEntry } from './volumes.schema';
import { type ListedParameter, parameterValuesQuery } from './volumes-sql';

export const PARAMETER_VALUES_LIMIT = 10;

export interface DeclaredParameter {
  parameter: string;
  title: string;
  dataType: string;
}

export interface ParameterSample {
  plan: SamplingPlan;
  /** Contacts whose events are read (the root's, or the whole audience). */
  population: number;
  /** Of those, the contacts in the sampled buckets (all of them unsampled). */
  scanned: number;
  piiAccess: ContactDataView;
}

/** One listed value: value as text, its events, Σn², contacts, the commonest name with it and whether any name was seen. */
type TopValue = [value: string, events: string, squares: string, contacts: string, name: string, named: number];
type ParameterRow = { parameter: string; events: string; distinct: string; top: TopValue[] };

/** Why a parameter's values are not listed before anything is read: the data mode (withheld: no value of any type, ADR 0164), rule 7's name rules (an id paired with a name is listed: rule 13). */
function omittedBeforeReading(p: DeclaredParameter, paired: boolean, piiAccess: ContactDataView): string | undefined {
  if (piiAccess === 'withheld') return TOP_VALUES_OMITTED.dataMode;
  const byName = nameReason({ uid: p.parameter, type: p.dataType as AttributeType });
  if (byName === TOP_VALUES_OMITTED.identifier) return paired ? undefined : `${byName}, and no name parameter pairs with it`;
  return byName;
}

/** What the parameter values of one event type read, built before anything is read: the entries so far and the one query, if any parameter is listed. */
export interface ParameterValuesRead {
  entries: EventParameterEntry[];
  listed: ListedParameter[];
  partners: Map<number, ListedParameter>;
  query?: Sql;
}

/** The entries of `declared`, those not listed saying why, and the query of the listed ones' values over `events` (ADR 0222). */
export function parameterValuesRead(events: Sql, declared: readonly DeclaredParameter[], piiAccess: ContactDataView): ParameterValuesRead {
  const { nameOf, idOf } = pairParameters(declared.map((p) => p.parameter));
  const entries: EventParameterEntry[] = declared.map((p) => ({
    uid: p.parameter,
    title: p.title,
    dataType: p.dataType,
    ...(nameOf.has(p.parameter) ? { nameParameter: nameOf.get(p.parameter) } : {}),
    ...(idOf.has(p.parameter) ? { idParameter: idOf.get(p.parameter) } : {}),
  }));
  const listed: ListedParameter[] = [];
  declared.forEach((p, index) => {
    const omitted = omittedBeforeReading(p, nameOf.has(p.parameter), piiAccess);
    if (omitted) entries[index].valuesOmitted = omitted;
    else listed.push({ index, uid: p.parameter, kind: valueKindOf(p.dataType as AttributeType) });
  });
  const partners = namePartners(listed, nameOf, declared);
  return { entries, listed, partners, ...(listed.length ? { query: parameterValuesQuery(events, listed, PARAMETER_VALUES_LIMIT, partners) } : {}) };
}

/**
 * The parameter values of one event type (probe rules 11 and 13, ADR 0166 and 0167): over the
 * events of the sampled contacts, each value's events are a total over contacts (estimateTotal);
 * an id parameter paired with a name parameter lists, beside each id, the name most often seen
 * with it, and both are returned.
 */
export async function eventParameters(reads: ProbeReads, read: ParameterValuesRead, declared: readonly DeclaredParameter[], m: ParameterSample): Promise<EventParameterEntry[]> {
  const { entries, listed, partners, query } = read;
  if (!query) return entries;

  const rows = await reads.rows<ParameterRow>(query);
  const sampled = m.plan.applied;
  const total = (sum: number, squares: number) => estimateTotal(sum, squares, m.scanned, m.population, sampled);
  const byIndex = new Map(rows.map((r) => [Number(r.parameter), r]));
  for (const { index } of listed) {
    const row = byIndex.get(index);
    const type = { type: declared[index].dataType as AttributeType };
    const partner = partners.get(index);
    const nameType = partner && { type: declared[partner.index].dataType as AttributeType };
    const values: NonNullable<EventParameterEntry['values']> = (row?.top ?? []).map(([value, eventsText, squares, contactsText, name, named]) => {
      const [observed, contacts] = [Number(eventsText), Number(contactsText)];
      const e = total(observed, Number(squares));
      return {
        value: decodeValue(type, value, m.piiAccess),
        ...(nameType ? { name: Number(named) ? decodeValue(nameType, name, m.piiAccess) : null } : {}),
        count: e.count,
        observedCount: observed,
        observedContacts: contacts,
        approximate: sampled,
        reliable: !sampled || contacts >= m.plan.minReliableCount,
        countError: e.countError,
      };
    });
    const distinct = Number(row?.distinct ?? 0);
    if (distinct > MAX_DISTINCT_FOR_TOP_VALUES) {
      entries[index].valuesOmitted = TOP_VALUES_OMITTED.tooManyDistinct;
      continue;
    }
    const listedObserved = values.reduce((s, v) => s + v.observedCount, 0);
    entries[index].values = values;
    // Only the count: the error of a remainder would need per-contact sums of every unlisted value.
    entries[index].other = total(Math.max(0, Number(row?.events ?? 0) - listedObserved), 0).count;
    entries[index].truncated = distinct > values.length;
  }
  return entries;
}

/** The name parameter of each listed id parameter that has one (probe rule 13), listed or not: its values are read for the names only. */
function namePartners(listed: readonly ListedParameter[], nameOf: Map<string, string>, declared: readonly DeclaredParameter[]): Map<number, ListedParameter> {
  const indexOf = new Map(declared.map((d, index) => [d.parameter, index]));
  const partners = new Map<number, ListedParameter>();
  for (const id of listed) {
    const uid = nameOf.get(id.uid);
    if (uid === undefined) continue;
    const index = indexOf.get(uid)!;
    partners.set(id.index, { index, uid, kind: valueKindOf(declared[index].dataType as AttributeType) });
  }
  return partners;
}
