import { CHANNELS, isSuppressed, suppressionAttribute } from '@meld/contracts';
import { contactRef, mergeAttributes, type AudienceContact, type DataSourceInfo, type SourceContact } from './merge-core';

/**
 * Suppression survivorship (ADRs 0048, 0361): on each channel, a `_suppressed_<channel>: true`
 * held by any member wins over the priority winner, as an opt-out does, so merging contacts
 * never makes a suppressed number reachable. Among several members holding it the usual
 * priority picks the lineage. Applied beside applyRestrictiveConsent, on the core's result
 * before anything is compared or written.
 */
export function applySuppression(audiences: AudienceContact[], contacts: readonly SourceContact[], sources: ReadonlyMap<string, DataSourceInfo>): void {
  const byRef = new Map(contacts.map((c) => [contactRef(c), c]));
  for (const audience of audiences) {
    for (const channel of CHANNELS) {
      const key = suppressionAttribute(channel);
      if (audience.attributes[key] === true) continue;
      const holders = audience.members.map((r) => byRef.get(r)).filter((m): m is SourceContact => m !== undefined && isSuppressed(m.attributes, channel));
      if (!holders.length) continue;
      audience.attributes[key] = true;
      audience.lineage[key] = mergeAttributes(holders.map((m) => ({ ...m, attributes: { [key]: true } })), sources).lineage[key]!;
    }
  }
}
