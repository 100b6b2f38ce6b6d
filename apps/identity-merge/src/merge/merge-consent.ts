import { CONSENT_CHANNELS, type ConsentStatus, consentStatus } from '@meld/contracts';
import { contactRef, mergeAttributes, type AudienceContact, type DataSourceInfo, type SourceContact } from './merge-core';

/**
 * Consent survivorship (ADR 0048): on each channel, an
 * opt-out held by any member wins over the priority winner, so merging contacts never makes a
 * person who opted out somewhere reachable again. Among several opt-outs the usual priority
 * picks the lineage. Applied to the core's result before anything is compared or written.
 */
export function applyRestrictiveConsent(audiences: AudienceContact[], contacts: readonly SourceContact[], sources: ReadonlyMap<string, DataSourceInfo>): void {
  const byRef = new Map(contacts.map((c) => [contactRef(c), c]));
  for (const audience of audiences) {
    for (const channel of CONSENT_CHANNELS) {
      const key = `_consent_${channel}`;
      if (audience.attributes[key] === 'opt-out') continue;
      const optedOut = audience.members.map((r) => byRef.get(r)).filter((m): m is SourceContact => m?.attributes[key] === 'opt-out');
      if (!optedOut.length) continue;
      audience.attributes[key] = 'opt-out';
      audience.lineage[key] = mergeAttributes(optedOut.map((m) => ({ ...m, attributes: { [key]: 'opt-out' } })), sources).lineage[key];
    }
  }
}

export interface ConsentChange {
  audienceId: string;
  channel: string;
  status: ConsentStatus;
  previous: ConsentStatus;
  source: string;
  /** When the winning source recorded the statement (null when cleared or unknown). */
  sourceAt: string | null;
}

/**
 * The channels whose merged consent differs between the stored audience contact and its new
 * state. The source is the data source whose value won (lineage); a cleared consent is
 * attributed to `stepSource`, the data source of the changed contact that ran the step.
 */
export function consentChanges(
  audience: AudienceContact,
  old: { attributes: Record<string, unknown> } | undefined,
  contacts: readonly SourceContact[],
  stepSource: string,
): ConsentChange[] {
  const changes: ConsentChange[] = [];
  for (const channel of CONSENT_CHANNELS) {
    const key = `_consent_${channel}`;
    const status = consentStatus(audience.attributes[key]);
    const previous = consentStatus(old?.attributes[key]);
    if (status === previous) continue;
    const winner = status ? audience.lineage[key] : undefined;
    const times = contacts
      .filter((c) => c.dataSourceId === winner && c.attributes[key] === status && audience.members.includes(contactRef(c)))
      .map((c) => c.attributeAt[key])
      .filter((t): t is string => typeof t === 'string')
      .sort();
    changes.push({ audienceId: audience.id, channel, status, previous, source: `datasource:${winner ?? stepSource}`, sourceAt: times.at(-1) ?? null });
  }
  return changes;
}
