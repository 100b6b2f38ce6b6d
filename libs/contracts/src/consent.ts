/**
 * Consent as stored on contacts (system design §4): the reserved attribute `_consent_<channel>`
 * holds `opt-in` or `opt-out`; anything else, or nothing, is no statement. One reading for
 * every app that decides on consent (identity-merge's survivorship, messaging's sendability).
 */
import { CHANNELS, type Channel } from './addresses';

export const CONSENT_CHANNELS = CHANNELS;
export type ConsentChannel = Channel;
export type ConsentStatus = 'opt-in' | 'opt-out' | null;

export const consentAttribute = (channel: ConsentChannel): string => `_consent_${channel}`;

/** Only the two statements ingest accepts count; anything else (legacy data) is no statement. */
export const consentStatus = (value: unknown): ConsentStatus => (value === 'opt-in' || value === 'opt-out' ? value : null);

/** The contact's consent on a channel, from its (merged) attributes. */
export function consentOf(attributes: Readonly<Record<string, unknown>>, channel: ConsentChannel): ConsentStatus {
  const key = consentAttribute(channel);
  return Object.hasOwn(attributes, key) ? consentStatus(attributes[key]) : null;
}
