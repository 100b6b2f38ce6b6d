import { sql, type Sql } from './sql';

/** Hash buckets of the audience (system design §4): a sample is the contacts of the first `buckets` of 100. */
export const SAMPLING_BUCKETS = 100;
/** Observed contacts under which a sampled figure is flagged `reliable: false` (system design §4). */
export const MIN_RELIABLE_COUNT = 30;

/**
 * Sampling bands by audience size (product spec "Limits", system design §4): [below this size,
 * percent sampled]. 10,000 opens the first sampled band ("under 10,000: none"), and 20,000 and
 * 50,000 open the band above them too; 200,000 itself is in the 20% band, since only "above
 * 200,000" is sampled at 15% (sizes are whole contacts: below 200,001 is up to 200,000).
 */
const BANDS: ReadonlyArray<readonly [number, number, string]> = [
  [10_000, 100, 'under 10,000 contacts: not sampled'],
  [20_000, 75, '10,000 to 20,000 contacts: 75%'],
  [50_000, 50, '20,000 to 50,000 contacts: 50%'],
  [200_001, 20, '50,000 to 200,000 contacts: 20%'],
  [Infinity, 15, 'above 200,000 contacts: 15%'],
];

export interface SamplingPlan {
  applied: boolean;
  /** buckets / 100; 1 when not applied. */
  fraction: number;
  /** Buckets of 100 read. */
  buckets: number;
  /** Which band of the table applied. */
  band: string;
  minReliableCount: number;
}

/** The band of an audience of `size` contacts (10,000, 20,000 and 50,000 belong to the band above them: 10,000 is sampled at 75%; 200,000 to the band below: 20%). */
export function samplingPlan(size: number): SamplingPlan {
  const [, buckets, band] = BANDS.find(([below]) => size < below)!;
  return { applied: buckets < SAMPLING_BUCKETS, fraction: buckets / SAMPLING_BUCKETS, buckets, band, minReliableCount: MIN_RELIABLE_COUNT };
}

/**
 * The sample as a condition on the audience snapshot (audience_snapshot, as audience_contacts):
 * bucket = floor(audience_hash × 100 / 2^64), so the first `buckets` buckets are one range of the
 * sorting key's second column. That is what `SAMPLE buckets/100` reads on these tables (SAMPLE BY
 * audience_hash), written as a range so it composes with the filter compiler's plain reads of the
 * current rows (ADR 0243) and the primary key skips
 * the unsampled granules (ADR 0161). A contact's bucket never changes: repeated probes scan the
 * same contacts.
 */
export function sampleCondition(plan: Pick<SamplingPlan, 'applied' | 'buckets'>): Sql | undefined {
  if (!plan.applied) return undefined;
  return sql`audience_hash < ${sampleBound(plan.buckets)}`;
}

/** The hash under which a contact is in the first `buckets` of 100 (audience_hash = cityHash64(audience_id)). */
export const sampleBound = (buckets: number): bigint => (2n ** 64n / BigInt(SAMPLING_BUCKETS)) * BigInt(buckets);

/** Buckets of the sampled bands (75, 50, 20, 15). */
export const SAMPLED_BUCKETS: readonly number[] = BANDS.map(([, buckets]) => buckets).filter((b) => b < SAMPLING_BUCKETS);

/** "estimated from a 15% sample" when sampled; '' otherwise. */
export function sampleQualifier(plan: Pick<SamplingPlan, 'applied' | 'buckets'>): string {
  return plan.applied ? `estimated from a ${plan.buckets}% sample` : '';
}
