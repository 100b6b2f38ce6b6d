/**
 * SMS suppression as published on contacts (system design §4: `basic` = "has an address for
 * the channel and is not suppressed"). Suppression is not consent: the number cannot or must
 * not be reached whatever the consent (a carrier said the destination is invalid, an operator
 * imported a do-not-contact list). Messaging keeps the truth per project and number; the
 * reserved attribute `_suppressed_<channel>` on its own (`meld-messaging`) source contact is the
 * copy the audience side reads: `true` is suppressed; absent, null or anything else is not.
 * Only messaging writes it (ingest refuses it from every other source); identity-merge keeps a
 * `true` held by any member (ADR 0048), and the audience count's `basic` filter excludes it
 * (ADR 0053).
 */
import type { Channel } from './addresses';

const PREFIX = '_suppressed_';

export const suppressionAttribute = (channel: Channel): string => `${PREFIX}${channel}`;

/** Whether an attribute name is one of the suppression attributes' family (any `_suppressed_` name, known channel or not). */
export const isSuppressionAttribute = (key: string): boolean => key.startsWith(PREFIX);

/** Why ingest refuses a write of `key` from a data source other than messaging's. */
export const suppressionWriteRefused = (key: string): string => `\`${key}\` is kept by Meld messaging: use the suppressions admin API`;

/** Whether the contact's (merged) attributes say the channel is suppressed: only an own `true`. */
export function isSuppressed(attributes: Readonly<Record<string, unknown>>, channel: Channel): boolean {
  const key = suppressionAttribute(channel);
  return Object.hasOwn(attributes, key) && attributes[key] === true;
}
