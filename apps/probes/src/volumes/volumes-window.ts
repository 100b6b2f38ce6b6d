import { EVENTS_LOOK_BACK_DAYS, type Plan } from '@meld/contracts';

const DAY_MS = 86_400_000;

/**
 * Default window by project audience size (product spec "Limits": "90 days below 10,000
 * contacts, 30 days up to 20,000, 15 days above"): [up to this size, days, band]. 20,000 itself
 * is "up to 20,000"; 10,000 is not "below 10,000".
 */
const DEFAULT_WINDOWS: ReadonlyArray<readonly [number, number, string]> = [
  [9_999, 90, 'under 10,000 contacts: 90 days'],
  [20_000, 30, '10,000 to 20,000 contacts: 30 days'],
  [Infinity, 15, 'above 20,000 contacts: 15 days'],
];

export const WINDOW_ANCHOR = 'computedAt: the window is the days ending at the moment of computation';

export interface VolumesWindow {
  /** Days queried, after clamping. */
  days: number;
  /** The `window` asked for, or the default of the audience's band. */
  requestedDays: number;
  /** Which default applied, or `requested`. */
  band: string;
  clamped: boolean;
  /** `plan` when the plan's look-back cut the window; null otherwise. */
  clampedBy: 'plan' | null;
  /** The plan's look-back (system design §4). */
  planLookBackDays: number;
  from: string;
  to: string;
  anchor: string;
}

/**
 * The event-volumes window (product spec "Limits", ADR 0166): `window` days, or 90 / 30 / 15 by
 * the project's audience size, clamped by the plan's look-back (s 30, m 90, l 180, xl 365; no plan
 * on the principal reads as the smallest). It ends at `now`.
 */
export function volumesWindow(input: { audienceSize: number; requestedDays?: number; plan: Plan | null; now: Date }): VolumesWindow {
  const [, defaultDays, defaultBand] = DEFAULT_WINDOWS.find(([upTo]) => input.audienceSize <= upTo)!;
  const requestedDays = input.requestedDays ?? defaultDays;
  const planLookBackDays = EVENTS_LOOK_BACK_DAYS[input.plan ?? 's'];
  const clamped = requestedDays > planLookBackDays;
  const days = clamped ? planLookBackDays : requestedDays;
  return {
    days,
    requestedDays,
    band: input.requestedDays === undefined ? defaultBand : 'requested',
    clamped,
    clampedBy: clamped ? 'plan' : null,
    planLookBackDays,
    from: windowStart(input.now, days).toISOString(),
    to: input.now.toISOString(),
    anchor: WINDOW_ANCHOR,
  };
}

/** Days an event type is queried: the window, or its retention when that is shorter (probe rule 12). */
export function effectiveWindowDays(windowDays: number, retentionDays: number | null): number {
  return retentionDays !== null && retentionDays < windowDays ? retentionDays : windowDays;
}

export const windowStart = (now: Date, days: number): Date => new Date(now.getTime() - days * DAY_MS);
