import { derivedPiiValue, maskPiiInText, type ContactDataView } from '@meld/auth';
import { sampleQualifier, type SamplingPlan } from '@meld/clickhouse';
import { estimateShare, round, wilsonInterval } from '../shared/estimators';
import type { ProfiledAttribute } from './profiled-attributes';
import { TOP_VALUES_OMITTED, type OmittedReason } from './top-values-policy';

export type TopValue = { value: string | number | boolean; count: number; observedCount: number; approximate: boolean; reliable: boolean; countError: number };

/** What the reads measured of one attribute. */
export interface AttributeFigures {
  /** Sampled (or all) contacts with a value. */
  observedFilled: number;
  /** Distinct values over every contact (sketch); undefined when not measured. */
  distinct?: number;
  avg?: number;
  min?: number;
  max?: number;
  /** Sampled contacts per listed value, value as ClickHouse's toString gave it. */
  top?: Array<{ value: string; contacts: number }>;
  /** Multivalue: sampled contacts holding a value outside the listed ones. */
  observedOther?: number;
  omitted?: OmittedReason;
}

export interface Measure {
  plan: SamplingPlan;
  /** Contacts of the denominator (every contact, exact). */
  population: number;
  /** Contacts read (the sample, or everyone). */
  scanned: number;
  piiAccess: ContactDataView;
}

export const MULTIVALUE_SEMANTICS = 'contacts holding the value: a contact with several values counts once under each, so the counts do not sum to the audience and shares can exceed 100% together (probe rule 14)';
export const EXTREMES_OMITTED = 'min and max are not reported from a sample: a sample misses the extremes';
/** Why blocked mode (or no audience scope) reports no min, max or avg: each can be one contact's value (ADR 0164, amended 2026-11-29). */
export const EXTREMES_WITHHELD = "min and max are not reported in this project's data mode: each is one contact's value";
export const AVG_WITHHELD = "the average is not reported in this project's data mode: over a filter or data source matching one contact it is that contact's value";

/** One Coverage probe entry (product spec), with the error bars of ADR 0162. */
export function coverageEntry(attribute: ProfiledAttribute, figures: AttributeFigures, m: Measure) {
  const sampled = m.plan.applied;
  const filled = estimateShare(figures.observedFilled, m.scanned, m.population, sampled);
  const [low, high] = wilsonInterval(figures.observedFilled, m.scanned, m.population, sampled);
  const reliableCount = (observed: number) => !sampled || observed >= m.plan.minReliableCount;
  // Withheld (blocked mode, or no audience scope): no value of any type is shown, only presence and distinct counts (ADR 0164).
  const omitted = m.piiAccess === 'withheld' ? TOP_VALUES_OMITTED.dataMode : figures.omitted;

  const entry: Record<string, unknown> = {
    uid: attribute.uid,
    label: attribute.label,
    type: attribute.type,
    multivalue: attribute.multivalue,
    fillRate: round(filled.share),
    fillRateError: round(filled.shareError),
    fillRateInterval: [round(low), round(high)],
    filled: filled.count,
    filledError: filled.countError,
    observedFilled: figures.observedFilled,
    approximate: sampled,
    reliable: reliableCount(figures.observedFilled),
    distinctValues: figures.distinct ?? null,
  };
  let listed: TopValue[] = [];
  if (omitted) entry.topValuesOmitted = omitted;
  else {
    listed = (figures.top ?? []).map((t) => {
      const e = estimateShare(t.contacts, m.scanned, m.population, sampled);
      return { value: decodeValue(attribute, t.value, m.piiAccess), count: e.count, observedCount: t.contacts, approximate: sampled, reliable: reliableCount(t.contacts), countError: e.countError };
    });
    entry.topValues = listed;
    const observedOther = figures.observedOther ?? figures.observedFilled - (figures.top ?? []).reduce((s, t) => s + t.contacts, 0);
    entry.topValuesOther = estimateShare(Math.max(0, observedOther), m.scanned, m.population, sampled).count;
  }
  if (attribute.multivalue) entry.topValuesSemantics = MULTIVALUE_SEMANTICS;
  if (attribute.type === 'number') entry.stats = stats(figures, sampled, m.piiAccess);
  entry.summary = summary(attribute, entry.fillRate as number, filled.shareError, figures.distinct, omitted ? undefined : listed[0], m.plan);
  return entry;
}

/** avg, min and max of a number attribute: null over no value (avgArray over nothing is NaN, minArray 0); none of them where values are withheld. */
function stats(figures: AttributeFigures, sampled: boolean, access: ContactDataView) {
  if (access === 'withheld') return { avg: null, avgOmitted: AVG_WITHHELD, extremesOmitted: EXTREMES_WITHHELD };
  const finite = (x: number | undefined) => (x !== undefined && Number.isFinite(x) && figures.observedFilled > 0 ? x : null);
  const avg = finite(figures.avg);
  if (sampled) return { avg, extremesOmitted: EXTREMES_OMITTED };
  return { avg, min: finite(figures.min), max: finite(figures.max) };
}

/** A listed value in its attribute's type: numbers, booleans (stored 1 / 0), dates (unix seconds) as ISO, PII as access allows. */
export function decodeValue(attribute: Pick<ProfiledAttribute, 'type'>, text: string, access: ContactDataView): string | number | boolean {
  switch (attribute.type) {
    case 'number':
      return Number(text);
    case 'boolean':
      // Attributes store booleans as 1 / 0, event parameters as JSON true / false.
      return text === 'true' || (text !== 'false' && Number(text) !== 0);
    case 'date':
      return new Date(Number(text) * 1000).toISOString().slice(0, 10);
    case 'datetime':
      return new Date(Number(text) * 1000).toISOString();
    case 'email':
    case 'phone':
      return derivedPiiValue(attribute.type, text, access) ?? '';
    default:
      // Free text can hold an email or a phone: masked where the caller does not read them in clear (ADR 0121); a withheld view lists no value at all (ADR 0164).
      return access === 'clear' ? text : maskPiiInText(text);
  }
}

const percent = (share: number) => `${round(share * 100, 2)}%`;

function summary(attribute: ProfiledAttribute, fillRate: number, shareError: number, distinct: number | undefined, first: TopValue | undefined, plan: SamplingPlan): string {
  const error = plan.applied ? ` (±${round(shareError * 100, 2)} points)` : '';
  const parts = [`${attribute.label} is filled for ${percent(fillRate)}${error} of contacts`];
  if (distinct !== undefined) parts.push(`${distinct} distinct value${distinct === 1 ? '' : 's'}`);
  if (first && typeof first.value !== 'string') parts.push(`most often ${String(first.value)}`);
  else if (first && attribute.type !== 'email' && attribute.type !== 'phone') parts.push(`most often "${first.value}"`);
  return `${parts.join(', ')}, ${plan.applied ? sampleQualifier(plan) : 'exact'}.`;
}
