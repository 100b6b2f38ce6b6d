import { CHANNEL_GROUPS, COMPLIANCE_POLICIES, type ChannelConfig, type ChannelGroup, defaultAttributionConfig, defaultGeneralConfig } from '@meld/contracts';
import { z } from 'zod';

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Deep merge for configuration patches: objects merge key by key, anything else (arrays,
 * null, scalars) replaces. `null` therefore clears a nullable field such as `optInKeywords`.
 */
export function deepMerge<T>(base: T, patch: unknown): T {
  if (!isPlain(base) || !isPlain(patch)) return (patch === undefined ? base : patch) as T;
  const out: Plain = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    // Bodies are JSON.parse'd, which makes `__proto__` an own key: never let it reach a prototype.
    if (v !== undefined && !UNSAFE_KEYS.has(k)) out[k] = deepMerge(out[k], v);
  }
  return out as T;
}
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The stored config merged over today's defaults, so every project shows all five channel
 * blocks with every field even if it was created before a field existed.
 */
export function completeGeneralConfig(stored: unknown): Record<ChannelGroup, ChannelConfig> {
  return deepMerge(defaultGeneralConfig(), stored ?? {});
}

export function completeAttributionConfig(stored: unknown): ReturnType<typeof defaultAttributionConfig> {
  return deepMerge(defaultAttributionConfig(), stored ?? {});
}

export const ChannelConfigSchema = z
  .object({
    defaultCompliancePolicy: z.enum(COMPLIANCE_POLICIES),
    optInKeywords: z.array(z.string()).nullable(),
    optOutKeywords: z.array(z.string()).nullable(),
    autoCreateContactsOnInbounds: z.boolean(),
    autoCreateContactsOnOutbounds: z.boolean().describe('when true, a direct send to an unknown phone creates the contact'),
    marketingOptOutScope: z.string(),
    marketingOptInScope: z.string(),
  })
  .meta({ id: 'ChannelConfig' });

export const GeneralConfigSchema = z
  .object(Object.fromEntries(CHANNEL_GROUPS.map((g) => [g, ChannelConfigSchema])) as Record<ChannelGroup, typeof ChannelConfigSchema>)
  .meta({ id: 'GeneralConfig', description: 'one block per channel group' });

export const ATTRIBUTION_WINDOWS = ['hoursSmsCampaignSent', 'hoursOtherCampaignSent', 'hoursCampaignCta', 'hoursCampaignOpen', 'hoursFindOutboundSms'] as const;

export const AttributionConfigSchema = z
  .object(Object.fromEntries(ATTRIBUTION_WINDOWS.map((k) => [k, z.int()])) as Record<(typeof ATTRIBUTION_WINDOWS)[number], z.ZodInt>)
  .meta({ id: 'AttributionConfig', description: 'integer hour windows' });
