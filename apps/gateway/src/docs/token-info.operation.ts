import { ALL_SCOPES, DATA_MODES } from '@meld/contracts';
import { OrganizationSummarySchema } from '@meld/api';
import { z } from 'zod';

/**
 * `GET /v1/` is answered by the gateway's own pipeline (a plain Fastify route, no
 * controller to scan), so its response is described here, as the pipeline builds it.
 */
export const TokenInfoSchema = z
  .object({
    entity: z.object({
      id: z.string(),
      kind: z.enum(['product', 'datasource', 'oauth']),
      prefix: z.string(),
      label: z.string().nullable(),
      createdAt: z.string(),
      projects: z.array(z.object({ id: z.string(), uid: z.string(), name: z.string() })).describe('projects the token reaches'),
    }),
    metadata: z.object({
      organization: OrganizationSummarySchema,
      dataMode: z.enum(DATA_MODES).describe('the strictest mode across reachable projects'),
      dataPolicy: z.object({
        mayReadContactData: z.boolean(),
        mayReadPii: z.boolean().describe('phone and email readable rather than masked, and searchable'),
      }),
      scopes: z.array(z.enum(ALL_SCOPES)),
    }),
  })
  .meta({ id: 'TokenInfo' });

export const TOKEN_INFO_OPERATION = {
  summary: 'Validate a token: the token, its projects, the organization and what it may read',
  description: 'Any product or OAuth token, whatever its scopes; `funds` needs ACCOUNT_READ.',
  tags: ['token'],
};

/** The pipeline reads the token's organization and projects from Postgres on every call (ADR 0360). */
export const TOKEN_INFO_UNAVAILABLE = {
  description: 'Postgres (the token\'s organization and projects) or Redis (rate limiting) did not answer: "token verification is temporarily unavailable; retry later" or "rate limiting is temporarily unavailable; retry later"; retry after `Retry-After` seconds',
  headers: { 'Retry-After': { description: 'seconds to wait before retrying', schema: { type: 'integer' } } },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};
