import { randomBytes } from 'node:crypto';
import { unstorableText } from '@meld/api';
import { hashToken } from '@meld/auth';
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { GRANT_TYPES } from '../protocol/oauth-model';
import { OAuthRepository } from '../storage/oauth.repository';
import { displayable } from './client-name';
import { redirectUriProblem } from './redirect-uri';
import { scopeList, unknownScopes } from '../authorize/scope-list';

export const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;

/** Client metadata text is kept in Postgres: U+0000 or a lone surrogate is the field's error, not a 500. */
export const storable = (value: string, ctx: z.RefinementCtx) => {
  const problem = unstorableText(value);
  if (problem) ctx.addIssue({ code: z.ZodIssueCode.custom, message: problem });
};

/**
 * A page of the client (RFC 7591 `client_uri`): an http or https URL. A `javascript:` or `data:`
 * URL is a script or a document of the client's, run in whoever opens the link.
 */
export const webPageUrl = () => z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).superRefine(storable);

const Metadata = z.object({
  redirect_uris: z.array(z.unknown()).min(1, 'at least one redirect URI is required'),
  client_name: z.string().trim().min(1).max(100).superRefine(storable).superRefine(displayable).optional(),
  client_uri: webPageUrl().optional(),
  token_endpoint_auth_method: z.enum(AUTH_METHODS).default('none'),
  grant_types: z.array(z.enum(GRANT_TYPES)).default([...GRANT_TYPES]),
  response_types: z.array(z.literal('code')).default(['code']),
  scope: z.string().optional(),
});

export type RegistrationAnswer = { status: 201; body: Record<string, unknown> } | { status: 400; body: { error: 'invalid_redirect_uri' | 'invalid_client_metadata'; error_description: string } };

/** RFC 7591 dynamic client registration: open (no initial access token), as MCP clients expect (ADR 0142). */
@Injectable()
export class RegisterClient {
  constructor(private readonly repo: OAuthRepository) {}

  async execute(body: unknown): Promise<RegistrationAnswer> {
    const redirects = (body as { redirect_uris?: unknown } | null)?.redirect_uris;
    if (Array.isArray(redirects)) {
      for (const [i, uri] of redirects.entries()) {
        const problem = redirectUriProblem(uri);
        if (problem) return { status: 400, body: { error: 'invalid_redirect_uri', error_description: `redirect_uris[${i}] ${problem}` } };
      }
    }
    const parsed = Metadata.safeParse(body ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return { status: 400, body: { error: 'invalid_client_metadata', error_description: `${issue.path.join('.') || 'body'}: ${issue.message}` } };
    }
    const m = parsed.data;
    // RFC 7591 §2.1: response_types "code" needs the authorization_code grant.
    if (!m.grant_types.includes('authorization_code')) {
      return { status: 400, body: { error: 'invalid_client_metadata', error_description: 'grant_types: must include authorization_code (the only response type is code)' } };
    }
    const scopes = m.scope === undefined ? null : scopeList(m.scope);
    const unknown = scopes ? unknownScopes(scopes) : [];
    if (scopes?.length === 0 || unknown.length) {
      return { status: 400, body: { error: 'invalid_client_metadata', error_description: `scope: ${unknown.length ? `unknown scope ${unknown.join(', ')}` : 'names no scope'}` } };
    }
    const scope = scopes ? scopes.join(' ') : null;
    const id = `mcl_${randomBytes(16).toString('base64url')}`;
    const secret = m.token_endpoint_auth_method === 'none' ? null : `mcs_${randomBytes(32).toString('base64url')}`;
    const name = m.client_name ?? new URL(m.redirect_uris[0] as string).host;
    const metadata = { client_uri: m.client_uri ?? null, grant_types: m.grant_types, response_types: m.response_types, scope };
    await this.repo.createClient({ id, secretHash: secret ? hashToken(secret) : null, name, redirectUris: m.redirect_uris as string[], tokenEndpointAuthMethod: m.token_endpoint_auth_method, metadata });
    return {
      status: 201,
      body: {
        client_id: id,
        client_id_issued_at: Math.floor(Date.now() / 1000),
        ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
        client_name: name,
        redirect_uris: m.redirect_uris,
        token_endpoint_auth_method: m.token_endpoint_auth_method,
        grant_types: m.grant_types,
        response_types: m.response_types,
        ...(m.client_uri ? { client_uri: m.client_uri } : {}),
        ...(scope ? { scope } : {}),
      },
    };
  }
}
