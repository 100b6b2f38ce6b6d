import { ALL_SCOPES } from '@meld/contracts';
import { type TokenEntity } from '@meld/db';
import { isoOrNull, isoWithOffset, timestamp } from '@meld/api';
import { z } from 'zod';

/** A token as the operator lists it: never the secret, which is shown once at creation. */
export const TokenSchema = z
  .object({
    id: z.string(),
    kind: z.enum(['product', 'datasource', 'oauth']),
    prefix: z.string().describe('first characters of the token, to recognise it'),
    label: z.string().nullable(),
    scopes: z.array(z.enum(ALL_SCOPES)),
    projects: z.array(z.string()).describe('project UIDs, or ["*"] for every project of the organization'),
    dataSourceId: z.string().nullable(),
    createdAt: timestamp(),
    revokedAt: timestamp().nullable(),
  })
  .meta({ id: 'Token' });

export function toTokenResource(t: TokenEntity): z.infer<typeof TokenSchema> {
  return {
    id: t.id,
    kind: t.kind,
    prefix: t.prefix,
    label: t.label,
    scopes: t.scopes,
    projects: t.projects,
    dataSourceId: t.dataSourceId,
    createdAt: isoWithOffset(t.createdAt),
    revokedAt: isoOrNull(t.revokedAt),
  };
}

/** `metadata` of a creation: the secret, once. */
export const IssuedTokenSchema = z.object({ token: z.string().describe('the bearer token; shown once, store it now') });
