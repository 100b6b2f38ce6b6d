import type { ContactDataView } from '@meld/auth';
import type { Sql } from '@meld/clickhouse';
import type { AttributeType } from '@meld/contracts';
import { decodeValue } from '../coverage/coverage-entry';
import { valueKindOf } from '../coverage/coverage-sql';
import { MAX_DISTINCT_FOR_TOP_VALUES, TOP_VALUES_OMITTED, nameReason } from '../coverage/top-values-policy';
import { estimateTotal } from '../shared/estimators';
import type { SamplingPlan } from '../shared/sampling';
import type { ProbeReads } from '../shared/probe-reads';
import { pairParameters } from './parameter-pairs';
import type { EventParameterEntry } from './volumes.schema';
import { type ListedParameter, namesOfIdsQuery, parameterTotalsQuery, parameterValuesQuery } from './volumes-sql';

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

type ValueRow = { parameter: string; value: string; events: string; squares: string; contacts: string };
type TotalRow = { parameter: string; events: string; distinct: string };

/** Why a parameter's values are not listed before anything is read: rule 7's name rules (an id paired with a name is listed: rule 13) and the data mode. */
function omittedBeforeReading(p: DeclaredParameter, paired: boolean, piiAccess: ContactDataView): string | undefined {
  const byName = nameReason({ uid: p.parameter, type: p.dataType as AttributeType });
  if (byName === TOP_VALUES_OMITTED.identifier) return paired ? undefined : `${byName}, and no name parameter pairs with it`;
  if (byName) return byName;
  if ((p.dataType === 'email' || p.dataType === 'phone') && piiAccess === 'withheld') return TOP_VALUES_OMITTED.dataMode;
  return undefined;
}

/**
 * The parameter values of one event type (probe rules 11 and 13, ADR 0166 and 0167): over the
 * events of the sampled contacts, each value's events are a total over contacts (estimateTotal);
 * an id parameter paired with a name parameter lists, beside each id, the name most often seen
 * with it, and both are returned.
 */
export async function eventParameters(reads: ProbeReads, events: Sql, declared: readonly DeclaredParameter[], m: ParameterSample): Promise<EventParameterEntry[]> {
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
    const omitted = omittedBeforeReading(p, nameOf.has(p.parameter), m.piiAccess);
    if (omitted) entries[index].valuesOmitted = omitted;
    else listed.push({ index, uid: p.parameter, kind: valueKindOf(p.dataType as AttributeType) });
  });
  if (!listed.length) return entries;

  const [rows, totals] = await Promise.all([reads.rows<ValueRow>(parameterValuesQuery(events, listed, PARAMETER_VALUES_LIMIT)), reads.rows<TotalRow>(parameterTotalsQuery(events, listed))]);
  const sampled = m.plan.applied;
  const total = (sum: number, squares: number) => estimateTotal(sum, squares, m.scanned, m.population, sampled);
  const texts = new Map<number, string[]>();
  for (const { index } of listed) {
    entries[index].values = [];
    texts.set(index, []);
  }
  for (const r of rows) {
    const index = Number(r.parameter);
    const [events, contacts] = [Number(r.events), Number(r.contacts)];
    const e = total(events, Number(r.squares));
    const type = { type: declared[index].dataType as AttributeType };
    entries[index].values!.push({ value: decodeValue(type, r.value, m.piiAccess), count: e.count, observedCount: events, observedContacts: contacts, approximate: sampled, reliable: !sampled || contacts >= m.plan.minReliableCount, countError: e.countError });
    texts.get(index)!.push(r.value);
  }
  const totalsByIndex = new Map(totals.map((t) => [Number(t.parameter), t]));
  for (const { index } of listed) {
    const t = totalsByIndex.get(index);
    const observed = Number(t?.events ?? 0);
    const distinct = Number(t?.distinct ?? 0);
    const listedObserved = entries[index].values!.reduce((s, v) => s + v.observedCount, 0);
    // Only the count: the error of a remainder would need per-contact sums of every unlisted value.
    entries[index].other = total(Math.max(0, observed - listedObserved), 0).count;
    entries[index].truncated = distinct > entries[index].values!.length;
    if (distinct > MAX_DISTINCT_FOR_TOP_VALUES) {
      delete entries[index].values;
      delete entries[index].other;
      delete entries[index].truncated;
      entries[index].valuesOmitted = TOP_VALUES_OMITTED.tooManyDistinct;
    }
  }
  await addNames(reads, events, listed, entries, texts, nameOf, declared, m.piiAccess);
  return entries;
}

/** Beside each listed id value, the name value most often seen with it (probe rule 13). */
async function addNames(reads: ProbeReads, events: Sql, listed: ListedParameter[], entries: EventParameterEntry[], texts: Map<number, string[]>, nameOf: Map<string, string>, declared: readonly DeclaredParameter[], piiAccess: ContactDataView) {
  const byUid = new Map(listed.map((l) => [l.uid, l]));
  const declaredByUid = new Map(declared.map((d, index) => [d.parameter, { d, index }]));
  await Promise.all(
    listed.map(async (id) => {
      const nameUid = nameOf.get(id.uid);
      const ids = texts.get(id.index) ?? [];
      if (nameUid === undefined || !entries[id.index].values || ids.length === 0) return;
      const name = byUid.get(nameUid) ?? { index: declaredByUid.get(nameUid)!.index, uid: nameUid, kind: valueKindOf(declaredByUid.get(nameUid)!.d.dataType as AttributeType) };
      const rows = await reads.rows<{ id: string; name: string }>(namesOfIdsQuery(events, id, name, ids));
      const names = new Map(rows.map((r) => [r.id, r.name]));
      const type = { type: declaredByUid.get(nameUid)!.d.dataType as AttributeType };
      entries[id.index].values!.forEach((v, i) => {
        const text = names.get(ids[i]);
        v.name = text === undefined ? null : decodeValue(type, text, piiAccess);
      });
    }),
  );
}
