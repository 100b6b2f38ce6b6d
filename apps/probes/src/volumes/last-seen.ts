import type { ContactDataView } from '@meld/auth';

/**
 * Why a withheld view (blocked mode, or no audience data level) reports no `lastSeenAt`: under a
 * root matching one contact it is that contact's last event time (ADR 0164, amendment on lastSeenAt).
 */
export const LAST_SEEN_WITHHELD = "the latest event time is not reported in this project's data mode: over a filter matching one contact it is that contact's last event";

export type LastSeen = { lastSeenAt: string | null; lastSeenAtOmitted?: string };

/**
 * `lastSeenAt` of a type's volume as `view` allows. Null alone keeps probe rule 12's meaning
 * (nothing arrived in the window); a withheld view is null with `lastSeenAtOmitted`, whatever
 * arrived, as coverage's withheld `avg` is null with `avgOmitted`.
 */
export function lastSeen(count: number, latestUnix: number | undefined, view: ContactDataView): LastSeen {
  if (view === 'withheld') return { lastSeenAt: null, lastSeenAtOmitted: LAST_SEEN_WITHHELD };
  return { lastSeenAt: count > 0 && latestUnix ? new Date(latestUnix * 1000).toISOString() : null };
}
