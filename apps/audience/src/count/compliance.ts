import { join, raw, sql, type Sql } from '@meld/clickhouse';
import { CHANNELS, type Channel, type ConsentScopes, PER_CHANNEL, consentAttribute, consentSources, slotColumn, suppressionAttribute } from '@meld/contracts';
import { slotOf, type FilterCatalogue } from '@meld/filters';
import { z } from 'zod';

/**
 * The compliance filter per channel (system.md §4, ADR 0053),
 * as SQL over an audience_snapshot row (libs/clickhouse/migrations/0003, 0006):
 * - address: `channels` holds the channel (a valid mobile for sms, rcs and whatsapp, a valid email
 *   for email; the probes sink decides it when it writes the snapshot);
 * - consent: the merged `_consent_<channel>` attribute (its slot column, else its str entry),
 *   `opt-in` or `opt-out`; anything else, or nothing, is no statement; read as the project's
 *   marketing scopes extend it (`consentSources` in @meld/contracts, ADR 0347): an opt-out on a
 *   channel whose `marketingOptOutScope` is `all_channels` opts out everywhere, an opt-in on one
 *   whose `marketingOptInScope` is `all_channels` opts in wherever no opt-out reaches;
 * - suppressed: the merged `_suppressed_<channel>` attribute is true (messaging's published copy of
 *   its suppression list, ADR 0361; a boolean: 1 in its `n` slot column, else its num entry);
 * - basic = address and not suppressed; opt-out = basic and not opted out; opt-in = basic and opted in.
 */
export const COMPLIANCE_CHANNELS = CHANNELS;
export type ComplianceChannel = Channel;
export const COMPLIANCE_MODES = ['basic', 'opt-in', 'opt-out'] as const;
export type ComplianceMode = (typeof COMPLIANCE_MODES)[number];

const mode = z.enum(COMPLIANCE_MODES);
export const FilterComplianceSchema = z
  .strictObject({
    sms: mode.optional(),
    email: mode.optional(),
    rcs: mode.optional(),
    whatsapp: mode.optional(),
  })
  .describe('compliance filter per channel: `basic` (has an address for the channel and is not suppressed on it), `opt-out` (basic and not opted out), `opt-in` (basic and opted in)');
export type FilterCompliance = z.infer<typeof FilterComplianceSchema>;

/** The slot column of each channel's `_consent_<channel>` (or `_suppressed_<channel>`) attribute, where it has one (migration 0005). */
export type ConsentColumns = Partial<Record<ComplianceChannel, string>>;

function slotColumns(catalogue: FilterCatalogue, attributeOf: (ch: ComplianceChannel) => string): ConsentColumns {
  const out: ConsentColumns = {};
  for (const ch of COMPLIANCE_CHANNELS) {
    const attribute = catalogue.attributes.find((a) => a.uid === attributeOf(ch));
    const slot = attribute && slotOf(attribute);
    if (slot) out[ch] = slotColumn(slot.kind, slot.index);
  }
  return out;
}

export const consentColumns = (catalogue: FilterCatalogue): ConsentColumns => slotColumns(catalogue, consentAttribute);
export const suppressionColumns = (catalogue: FilterCatalogue): ConsentColumns => slotColumns(catalogue, suppressionAttribute);

/** How a project's consents read: where each is stored, and how far each reaches (ADR 0347); where each channel's suppression is stored. */
export interface ConsentReading {
  columns: ConsentColumns;
  scopes: ConsentScopes;
  suppressed: ConsentColumns;
}

/** Per channel, every consent and suppression read from its key/value entry: today's reading with no catalogue. */
const PLAIN: ConsentReading = { columns: {}, scopes: PER_CHANNEL, suppressed: {} };

const address = (ch: ComplianceChannel): Sql => sql`has(channels, ${ch})`;
/** The statement recorded on `ch`. A status is never '' (the slot's default), so the column needs no presence check. */
const stated = (ch: ComplianceChannel, status: 'opt-in' | 'opt-out', columns: ConsentColumns): Sql => {
  const column = columns[ch];
  return column ? sql`${raw(column)} = ${status}` : sql`arrayExists((k, v) -> k = ${consentAttribute(ch)} AND v = ${status}, str_keys, str_values)`;
};
const anyStated = (channels: ComplianceChannel[], status: 'opt-in' | 'opt-out', columns: ConsentColumns): Sql =>
  channels.length === 1 ? stated(channels[0]!, status, columns) : sql`(${join(channels.map((c) => stated(c, status, columns)), ' OR ')})`;

/**
 * The contact's consent on `ch` is `status`, as `effectiveConsent` reads it (@meld/contracts):
 * opted out when any channel reaching it states opt-out; opted in when none does and any
 * channel reaching it states opt-in. Per channel, today's single comparison.
 */
function consent(ch: ComplianceChannel, status: 'opt-in' | 'opt-out', { columns, scopes }: ConsentReading): Sql {
  const sources = consentSources(ch, scopes);
  const optedOut = anyStated(sources.optOut, 'opt-out', columns);
  if (status === 'opt-out') return optedOut;
  const optedIn = anyStated(sources.optIn, 'opt-in', columns);
  // One attribute holds one status: with nothing but the channel's own statement, an opt-in is no opt-out.
  return sources.optOut.length === 1 && sources.optIn.length === 1 ? optedIn : sql`(${optedIn} AND NOT ${optedOut})`;
}

/**
 * Suppressed on the channel (ADR 0361): messaging keeps the list and publishes it as the
 * boolean `_suppressed_<channel>` on its own source contact; identity-merge keeps a true held by
 * any member. A boolean is 1 in the `num` arrays and in its `n` slot column, whose default is 0,
 * so the column needs no presence check; false, or anything else, is not suppressed.
 */
function suppressed(ch: ComplianceChannel, columns: ConsentColumns): Sql {
  const column = columns[ch];
  return column ? sql`${raw(column)} = 1` : sql`arrayExists((k, v) -> k = ${suppressionAttribute(ch)} AND v = 1, num_keys, num_values)`;
}

/** Has an address for the channel and is not suppressed on it. */
const basic = (ch: ComplianceChannel, reading: ConsentReading): Sql => sql`(${address(ch)} AND NOT ${suppressed(ch, reading.suppressed)})`;

/** The condition a contact meets under `mode` on `ch`. */
export function complianceCondition(ch: ComplianceChannel, m: ComplianceMode, reading: ConsentReading = PLAIN): Sql {
  if (m === 'basic') return basic(ch, reading);
  if (m === 'opt-in') return sql`(${basic(ch, reading)} AND ${consent(ch, 'opt-in', reading)})`;
  return sql`(${basic(ch, reading)} AND NOT ${consent(ch, 'opt-out', reading)})`;
}

/** Figures of one channel over the contacts matching the root (not narrowed by any channel). */
export interface ChannelCompliance {
  mode: ComplianceMode;
  /** Contacts that meet `mode` on this channel. */
  reachable: number;
  /** With an address, not suppressed, opted in. */
  optedIn: number;
  /** With an address, not suppressed, opted out. */
  optedOut: number;
  /** With an address, not suppressed, no consent statement. */
  noConsent: number;
  /** With an address, suppressed on the channel, whatever its consent. */
  suppressed: number;
  /** No valid address for the channel. optedIn + optedOut + noConsent + suppressed + noValidAddress = the contacts matching the root. */
  noValidAddress: number;
}

/** Counts measuring one channel (audienceCount's), named `<channel>_<what>` (channel names are a closed list). */
export function channelCounts(ch: ComplianceChannel, reading: ConsentReading = PLAIN): Array<[string, Sql]> {
  return [
    [`${ch}_address`, address(ch)],
    [`${ch}_basic`, basic(ch, reading)],
    [`${ch}_in`, sql`${basic(ch, reading)} AND ${consent(ch, 'opt-in', reading)}`],
    [`${ch}_out`, sql`${basic(ch, reading)} AND ${consent(ch, 'opt-out', reading)}`],
  ];
}

/** The breakdown from a row of `channelCounts` (UInt64 arrive as strings) and the root's count. */
export function channelFigures(ch: ComplianceChannel, m: ComplianceMode, row: Record<string, string>, matching: number): ChannelCompliance {
  const [withAddress, basicCount, optedIn, optedOut] = ['address', 'basic', 'in', 'out'].map((w) => Number(row[`${ch}_${w}`] ?? 0));
  const reachable = m === 'basic' ? basicCount : m === 'opt-in' ? optedIn : basicCount - optedOut;
  return { mode: m, reachable, optedIn, optedOut, noConsent: basicCount - optedIn - optedOut, suppressed: withAddress - basicCount, noValidAddress: matching - withAddress };
}
