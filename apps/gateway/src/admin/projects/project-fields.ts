import { CHANNEL_GROUPS, COMPLIANCE_POLICIES, DATA_MODES, MARKETING_SCOPES, isPhoneRegion, localeCountry } from '@meld/contracts';
import { ATTRIBUTION_WINDOWS, canonicalTimeZone } from '@meld/api';
import { z } from 'zod';

export const PROJECT_STATUSES = ['active', 'inactive', 'suspended', 'archived'] as const;

const LOCALE = /^[a-z]{2,3}(?:_[A-Z]{2})?$/;
/** A locale without a country, or whose country numbers phones (the format is the regex's to refuse). */
function countryOfPhones(locale: string): boolean {
  const country = localeCountry(locale);
  return !LOCALE.test(locale) || country === undefined || isPhoneRegion(country);
}
const domain = z.string().regex(/^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i, 'must be a domain name');
const keywords = z.array(z.string().trim().min(1).max(30)).max(20).nullable();
const json = z.record(z.string(), z.unknown());

const channelPatch = z
  .strictObject({
    defaultCompliancePolicy: z.enum(COMPLIANCE_POLICIES),
    optInKeywords: keywords,
    optOutKeywords: keywords,
    autoCreateContactsOnInbounds: z.boolean(),
    autoCreateContactsOnOutbounds: z.boolean(),
    marketingOptOutScope: z.enum(MARKETING_SCOPES).describe("`all_channels`: an opt-out recorded on the block's channel opts the contact out of every channel (ADR 0347; not read on channelDefaults)"),
    marketingOptInScope: z.enum(MARKETING_SCOPES).describe("`all_channels`: an opt-in recorded on the block's channel counts on every channel no opt-out reaches (ADR 0347; not read on channelDefaults)"),
  })
  .partial();

/** Partial `generalConfig`: any channel block, any field; deep-merged over the current config. */
export const GeneralConfigPatch = z.strictObject(Object.fromEntries(CHANNEL_GROUPS.map((g) => [g, channelPatch.optional()])) as Record<(typeof CHANNEL_GROUPS)[number], z.ZodOptional<typeof channelPatch>>);

export const AttributionConfigPatch = z.strictObject(
  Object.fromEntries(ATTRIBUTION_WINDOWS.map((k) => [k, z.int().min(0).max(8760).optional()])) as Record<(typeof ATTRIBUTION_WINDOWS)[number], z.ZodOptional<z.ZodInt>>,
);

/** Every writable Project field (spec: Project), plus the merging attributes and the data-mode override. */
export const projectFields = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).nullable(),
  projectType: z.string().regex(/^[a-z_]{1,50}$/, 'must be lowercase letters or underscores, e.g. `standard`'),
  projectStatus: z.enum(PROJECT_STATUSES),
  // The country is the default of national phone numbers (ADR 0152): `en_UK` would leave every one invalid (ADR 0014).
  locale: z
    .string()
    .regex(LOCALE, 'must be language_COUNTRY, e.g. en_US')
    .refine(countryOfPhones, { error: (issue) => `"${localeCountry(String(issue.input))}" is not a country code phone numbers belong to (ISO 3166-1 alpha-2, e.g. en_GB not en_UK)` }),
  timezone: z.string().refine((tz) => canonicalTimeZone(tz) !== null, 'must be an IANA time zone, e.g. Europe/Paris'),
  defaultSmsSender: z.uuid().nullable().describe('id of an SMS sender of this project'),
  shortTrackingDomain: domain.nullable(),
  unsubscribeTrackingDomain: domain.nullable(),
  businessType: z.string().max(100).nullable(),
  // A Postgres `integer` column: a larger count was its 22003, a 500 (ADR 0014).
  businessContactsSize: z.int().min(0).max(2_147_483_647),
  businessUrl: z.union([z.url({ protocol: /^https?$/ }), z.literal('')]),
  lockedUntil: z.iso.datetime({ offset: true }).nullable(),
  lockedReason: z.string().max(500).nullable(),
  testSmsNumbers: z.array(z.string().regex(/^\+[1-9]\d{6,14}$/, 'must be an E.164 number, e.g. +33612345678')).max(20),
  conversionConfig: json.nullable(),
  attributionConfig: AttributionConfigPatch.describe('partial; merged over the current windows'),
  generalConfig: GeneralConfigPatch.describe('partial; deep-merged over the current config (null clears a keyword list)'),
  brand: json.nullable(),
  mergingAttributes: z
    .array(z.string().min(1).max(64))
    .max(10)
    .describe('merging attributes beyond `_user_id` (always merging); each must be a unique-capable attribute of the project'),
  dataMode: z.enum(DATA_MODES).nullable().describe("overrides the organization's data mode; null follows it"),
};
