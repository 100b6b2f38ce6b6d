import { ALL_SCOPES } from '@meld/contracts';
import { DataSourceSchema, OrganizationSummarySchema, envelope } from '@meld/api';
import { z } from 'zod';
import { RateLimitUsageSchema } from '../../rate-limit-usage';

/** `GET …/stream`: organization, project, data source and recent usage (ingest spec: "metadata and quota object"). */
export const StreamDescriptionSchema = envelope(
  z.object({
    organization: OrganizationSummarySchema,
    project: z.object({ id: z.string(), uid: z.string(), name: z.string(), timezone: z.string() }),
    datasource: DataSourceSchema,
    usage: z.object({
      rateLimit: RateLimitUsageSchema.nullable().describe('this data source and endpoint, as counted by the gateway for this very call'),
    }),
  }),
  z.object({
    tokenKind: z.enum(['product', 'datasource', 'oauth', 'admin']),
    scopes: z.array(z.enum(ALL_SCOPES)),
  }),
).meta({ id: 'StreamDescription' });
export type StreamDescription = z.infer<typeof StreamDescriptionSchema>;
