import { DATA_MODES, PLANS } from '@meld/contracts';
import { z } from 'zod';
import type { OrganizationEntity } from '@meld/db';
import { timestamp } from './envelope';
import { isoWithOffset } from './time';

/** The summary a product token sees; `funds` only with ACCOUNT_READ (spec: "account details and funds"). */
export const OrganizationSummarySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    plan: z.enum(PLANS),
    apiTier: z.string(),
    funds: z.number().optional().describe('present only when the token has ACCOUNT_READ'),
  })
  .meta({ id: 'OrganizationSummary' });
export type OrganizationSummary = z.infer<typeof OrganizationSummarySchema>;

/** The operator's full view. */
export const OrganizationSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    plan: z.enum(PLANS),
    apiTier: z.string(),
    funds: z.number(),
    prepaid: z.boolean(),
    dataMode: z.enum(DATA_MODES),
    oauthSensitiveScopes: z.boolean(),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .meta({ id: 'Organization' });
export type OrganizationResource = z.infer<typeof OrganizationSchema>;

export function toOrganizationSummary(o: OrganizationEntity, withFunds: boolean): OrganizationSummary {
  return { id: o.id, name: o.name, plan: o.plan, apiTier: o.apiTier, ...(withFunds ? { funds: o.funds } : {}) };
}

export function toOrganizationResource(o: OrganizationEntity): OrganizationResource {
  return {
    id: o.id,
    name: o.name,
    plan: o.plan,
    apiTier: o.apiTier,
    funds: o.funds,
    prepaid: o.prepaid,
    dataMode: o.dataMode,
    oauthSensitiveScopes: o.oauthSensitiveScopes,
    createdAt: isoWithOffset(o.createdAt),
    updatedAt: isoWithOffset(o.updatedAt),
  };
}
