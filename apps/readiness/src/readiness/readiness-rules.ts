/**
 * The readiness rules (system design §4 "Readiness steps", ADR 0131): a pure function of one
 * snapshot of the project's setup, so the rules read as a list and are unit-tested apart
 * from Postgres.
 */

export const CHANNELS = ['sms', 'rcs'] as const;
export type ReadinessChannel = (typeof CHANNELS)[number];

export const PROJECT_STEP_KEYS = ['import', 'channels', 'legal_profile', 'funds'] as const;
export const CHANNEL_STEP_KEYS = ['legal_profile', 'add_sender', 'add_agent', 'funds'] as const;
export const STEP_KEYS = ['import', 'channels', 'legal_profile', 'add_sender', 'add_agent', 'funds'] as const;
export type StepKey = (typeof STEP_KEYS)[number];

/** Stable warning keys, in the order a report lists them (ADR 0131 says what each means). */
export const WARNING_KEYS = ['sender_not_effective', 'default_sender_not_active', 'sender_reaches_no_country', 'no_default_sms_sender', 'sender_without_price'] as const;
export type WarningKey = (typeof WARNING_KEYS)[number];
export type Severity = 'warning' | 'info';
const SEVERITY: Record<WarningKey, Severity> = {
  sender_not_effective: 'warning',
  default_sender_not_active: 'warning',
  sender_reaches_no_country: 'warning',
  no_default_sms_sender: 'info',
  sender_without_price: 'info',
};

/** A country of a sender as the rules read it: [ISO 3166-1 alpha-2 code, effective status]. */
export type CountryStatus = [country: string, effectiveStatus: string];

/**
 * A sender with the facts the rules read about its countries; countries the carriers do not
 * accept matter to no rule, so the snapshot leaves them out (readiness.repository.ts).
 */
export interface SenderSnapshot {
  id: string;
  channel: ReadinessChannel;
  alias: string;
  name: string;
  status: string;
  /** Countries whose carriers accept the sender, sorted. */
  acceptedCountries: string[];
  /** Accepted countries whose effective status is not `active`. */
  notActive: CountryStatus[];
  /** Accepted countries with no price (0). */
  unpriced: CountryStatus[];
}
export interface SetupSnapshot {
  legalProfileStatus: string;
  defaultSmsSender: string | null;
  prepaid: boolean;
  funds: number;
  hasAudienceContact: boolean;
  /** The senders in scope: all of the project's, or the channel's. */
  senders: SenderSnapshot[];
}

export interface ReadinessStep {
  key: StepKey;
  completed: boolean;
  isBlocker: boolean;
  disabled: boolean;
}
export interface WarningRow {
  senderId: string;
  senderName: string;
  /** null on a row about the sender as a whole. */
  country: string | null;
  /** The country's effective status, or on a sender-wide row the sender's own status. */
  effectiveStatus: string;
}
export interface ReadinessWarning {
  key: WarningKey;
  severity: Severity;
  count: number;
  rows: WarningRow[];
}
export interface Reach {
  reachableCountries: string[];
  senders: Record<string, string[]>;
}
export interface ReadinessReport {
  scope: 'project' | 'channel';
  channel: ReadinessChannel | null;
  percent: number;
  operational: boolean;
  steps: ReadinessStep[];
  warnings: ReadinessWarning[];
  reach: Reach | null;
}

const isActive = (s: SenderSnapshot) => s.status === 'active';

const step = (key: StepKey, completed: boolean, isBlocker = true): ReadinessStep => ({ key, completed, isBlocker, disabled: false });

/**
 * Funds matter only to prepaid organizations: for the others the step is disabled, and a
 * disabled step blocks nothing and counts for nothing in `percent` (ADR 0131).
 */
function fundsStep(s: SetupSnapshot): ReadinessStep {
  return s.prepaid ? step('funds', s.funds > 0) : { key: 'funds', completed: false, isBlocker: false, disabled: true };
}

export function projectReport(s: SetupSnapshot): ReadinessReport {
  const steps = [
    // Contacts are not needed to send (a direct SMS may create its contact): a step, not a blocker.
    step('import', s.hasAudienceContact, false),
    step('channels', s.senders.some(isActive)),
    step('legal_profile', s.legalProfileStatus === 'verified'),
    fundsStep(s),
  ];
  return { scope: 'project', channel: null, ...progress(steps), steps, warnings: warnings(s, true), reach: null };
}

export function channelReport(channel: ReadinessChannel, s: SetupSnapshot): ReadinessReport {
  const active = s.senders.filter((x) => x.channel === channel && isActive(x));
  const steps = [step('legal_profile', s.legalProfileStatus === 'verified'), step(channel === 'sms' ? 'add_sender' : 'add_agent', active.length > 0), fundsStep(s)];
  const inChannel = { ...s, senders: s.senders.filter((x) => x.channel === channel) };
  return { scope: 'channel', channel, ...progress(steps), steps, warnings: warnings(inChannel, channel === 'sms'), reach: reach(active) };
}

function progress(steps: ReadinessStep[]): { percent: number; operational: boolean } {
  const counted = steps.filter((x) => !x.disabled);
  const done = counted.filter((x) => x.completed).length;
  return {
    percent: counted.length ? Math.floor((done * 100) / counted.length) : 100,
    operational: steps.every((x) => !x.isBlocker || x.completed),
  };
}

/**
 * Countries the active senders' carriers accept (not the regulation-aware effective status:
 * product spec, "Readiness report"). Aliases are user data: the map is built from a Map so an
 * alias such as `__proto__` is an ordinary key.
 */
function reach(active: SenderSnapshot[]): Reach {
  const byAlias = new Map<string, Set<string>>();
  for (const sender of active) {
    if (sender.acceptedCountries.length === 0) continue;
    const set = byAlias.get(sender.alias) ?? new Set<string>();
    for (const c of sender.acceptedCountries) set.add(c);
    byAlias.set(sender.alias, set);
  }
  const all = new Set<string>();
  for (const set of byAlias.values()) for (const c of set) all.add(c);
  const aliases = [...byAlias.keys()].sort(compare);
  return {
    reachableCountries: [...all].sort(compare),
    senders: Object.fromEntries(aliases.map((alias) => [alias, [...byAlias.get(alias)!].sort(compare)])),
  };
}

function warnings(s: SetupSnapshot, withSmsDefault: boolean): ReadinessWarning[] {
  const rows = new Map<WarningKey, WarningRow[]>(WARNING_KEYS.map((k) => [k, []]));
  const active = s.senders.filter(isActive);
  const senderRow = (x: SenderSnapshot): WarningRow => ({ senderId: x.id, senderName: x.name, country: null, effectiveStatus: x.status });
  const countryRow = (x: SenderSnapshot, [country, effectiveStatus]: CountryStatus): WarningRow => ({ senderId: x.id, senderName: x.name, country, effectiveStatus });
  for (const sender of active) {
    if (sender.acceptedCountries.length === 0) rows.get('sender_reaches_no_country')!.push(senderRow(sender));
    rows.get('sender_not_effective')!.push(...sender.notActive.map((c) => countryRow(sender, c)));
    rows.get('sender_without_price')!.push(...sender.unpriced.map((c) => countryRow(sender, c)));
  }
  if (withSmsDefault) {
    const sms = s.senders.filter((x) => x.channel === 'sms');
    const chosen = s.defaultSmsSender === null ? undefined : sms.find((x) => x.id === s.defaultSmsSender);
    if (chosen && !isActive(chosen)) rows.get('default_sender_not_active')!.push(senderRow(chosen));
    if (s.defaultSmsSender === null) rows.get('no_default_sms_sender')!.push(...sms.filter(isActive).map(senderRow));
  }
  return WARNING_KEYS.filter((key) => rows.get(key)!.length > 0).map((key) => {
    const list = rows.get(key)!.sort(byRow);
    return { key, severity: SEVERITY[key], count: list.length, rows: list };
  });
}

/** Code-point order, as the spec's "sorted" country codes and as any client can repeat. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
function byRow(a: WarningRow, b: WarningRow): number {
  return compare(a.senderName, b.senderName) || compare(a.senderId, b.senderId) || compare(a.country ?? '', b.country ?? '');
}
