import { DATA_MODES, PLANS } from '@meld/contracts';
import { z } from 'zod';
import { decimalColumn } from '../shared/decimal';

/** Writable organization fields, shared by create and update. `funds` fits numeric(14,4). */
export const organizationFields = {
  name: z.string().trim().min(1).max(200),
  plan: z.enum(PLANS),
  apiTier: z.string().trim().min(1).max(50),
  // numeric(14,4): four decimals, never rounded silently (ADR 0014).
  funds: decimalColumn(14, 4, { min: -1e9, max: 1e9 }),
  prepaid: z.boolean(),
  dataMode: z.enum(DATA_MODES),
  oauthSensitiveScopes: z.boolean().describe('OAuth clients may be granted PROJECT_AUDIENCE_DATA_FULL and PROJECT_AGGREGATIONS in this organization (ADR 0144)'),
};
