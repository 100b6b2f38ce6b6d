/**
 * Consent as stored on contacts (system design §4): the reserved attribute `_consent_<channel>`
 * holds `opt-in` or `opt-out`; anything else, or nothing, is no statement. One reading for
 * every app that decides on consent (identity-merge's survivorship, messaging's sendability,
 * the audience count's compliance filters).
 */
import { CHANNELS, type Channel } from './addresses';
import type { ChannelGroup } from './catalogue/project-defaults';

export const CONSENT_CHANNELS = CHANNELS;
export type ConsentChannel = Channel;
export type ConsentStatus = 'opt-in' | 'opt-out' | null;

export const consentAttribute = (channel: ConsentChannel): string => `_consent_${channel}`;

/** Only the two statements ingest accepts count; anything else (legacy data) is no statement. */
export const consentStatus = (value: unknown): ConsentStatus => (value === 'opt-in' || value === 'opt-out' ? value : null);

/** The contact's consent on a channel, from its (merged) attributes, as stated on that channel alone. */
export function consentOf(attributes: Readonly<Record<string, unknown>>, channel: ConsentChannel): ConsentStatus {
  const key = consentAttribute(channel);
  return Object.hasOwn(attributes, key) ? consentStatus(attributes[key]) : null;
}

/**
 * Values of a channel block's `marketingOptOutScope` and `marketingOptInScope` (ADR 0017): the
 * spec shows `per_channel` (the default); `all_channels` is ours.
 */
export const MARKETING_SCOPES = ['per_channel', 'all_channels'] as const;
export type MarketingScope = (typeof MARKETING_SCOPES)[number];

/** The generalConfig block of each channel; `channelDefaults` belongs to no channel and no consent is recorded on it. */
export const CHANNEL_BLOCKS: Readonly<Record<ConsentChannel, ChannelGroup>> = { sms: 'channelSms', email: 'channelEmail', rcs: 'channelRcs', whatsapp: 'channelWhatsapp' };

/**
 * How far a consent recorded on a channel reaches (ADR 0347): the channels whose block says
 * `all_channels`, in CONSENT_CHANNELS order. Per channel (both empty) is the default.
 */
export interface ConsentScopes {
  /** `marketingOptOutScope: all_channels`: an opt-out recorded there opts the contact out of every channel. */
  readonly optOutEverywhere: readonly ConsentChannel[];
  /** `marketingOptInScope: all_channels`: an opt-in recorded there counts on every channel, unless an opt-out reaches it. */
  readonly optInEverywhere: readonly ConsentChannel[];
}

export const PER_CHANNEL: ConsentScopes = Object.freeze({ optOutEverywhere: [], optInEverywhere: [] });

/**
 * The scopes of a project's stored `generalConfig` (possibly partial, from before a field
 * existed, or hand-edited): only the exact value `all_channels` widens a consent; anything else,
 * or nothing, is `per_channel`, the default.
 */
export function consentScopesOf(generalConfig: unknown): ConsentScopes {
  const widened = (field: 'marketingOptOutScope' | 'marketingOptInScope') =>
    CONSENT_CHANNELS.filter((channel) => {
      const block = ownValue(generalConfig, CHANNEL_BLOCKS[channel]);
      return ownValue(block, field) === 'all_channels';
    });
  const optOutEverywhere = widened('marketingOptOutScope');
  const optInEverywhere = widened('marketingOptInScope');
  return optOutEverywhere.length || optInEverywhere.length ? { optOutEverywhere, optInEverywhere } : PER_CHANNEL;
}

/** A stored JSON object's own property (never one of Object.prototype's). */
function ownValue(object: unknown, key: string): unknown {
  return typeof object === 'object' && object !== null && !Array.isArray(object) && Object.hasOwn(object, key) ? (object as Record<string, unknown>)[key] : undefined;
}

/**
 * The statements that decide a contact's consent on `channel` under the project's scopes
 * (ADR 0347), the channel itself first:
 * - opted out when any channel of `optOut` states `opt-out` (an opt-out always wins);
 * - else opted in when any channel of `optIn` states `opt-in`;
 * - else no statement.
 * `effectiveConsent` applies it to attributes; the audience count writes the same rule as SQL.
 * Per channel, both lists are `[channel]`: `consentOf(attributes, channel)` exactly.
 */
export interface ConsentSources {
  optOut: ConsentChannel[];
  optIn: ConsentChannel[];
}

export function consentSources(channel: ConsentChannel, scopes: ConsentScopes = PER_CHANNEL): ConsentSources {
  const others = (channels: readonly ConsentChannel[]) => channels.filter((c) => c !== channel);
  return { optOut: [channel, ...others(scopes.optOutEverywhere)], optIn: [channel, ...others(scopes.optInEverywhere)] };
}

/** The contact's consent on a channel as the project's scopes read it (ADR 0347; `consentSources` says how). */
export function effectiveConsent(attributes: Readonly<Record<string, unknown>>, channel: ConsentChannel, scopes: ConsentScopes = PER_CHANNEL): ConsentStatus {
  const { optOut, optIn } = consentSources(channel, scopes);
  if (optOut.some((c) => consentOf(attributes, c) === 'opt-out')) return 'opt-out';
  if (optIn.some((c) => consentOf(attributes, c) === 'opt-in')) return 'opt-in';
  return null;
}
