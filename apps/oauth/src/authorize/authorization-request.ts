import { PRODUCT_SCOPES, type Scope } from '@meld/contracts';
import type { OAuthConfig } from '../oauth-config';
import type { ClientDirectory } from '../client-metadata/client-directory';
import type { ClientRow } from '../storage/oauth.repository';
import { isRegisteredRedirect } from './redirect-match';
import { registeredScopes, scopeList, unknownScopes } from './scope-list';

/** A checked authorization request (RFC 6749 §4.1.1 with PKCE, RFC 7636). */
export interface AuthorizationRequest {
  client: ClientRow;
  redirectUri: string;
  /** The request named its redirect_uri: the token request must repeat it (RFC 6749 §4.1.3). */
  redirectUriSent: boolean;
  state: string | null;
  scopes: Scope[];
  codeChallenge: string;
  resource: string | null;
}

/** Cannot be sent back to the client (unknown client, unregistered redirect URI): shown as a page, never redirected. */
export interface UntrustedFailure {
  kind: 'page';
  description: string;
}
/**
 * An error for a known client and its registered redirect URI (RFC 6749 §4.1.2.1). Not
 * redirected before the user has signed in: anyone can register a client, so the redirect URI
 * may be a phishing site (OAuth 2.1 §7.12.2, ADR 0357). The consent steps show the sign-in, then
 * a page whose link is `location`.
 */
export interface RedirectFailure {
  kind: 'redirect';
  client: ClientRow;
  redirectUri: string;
  description: string;
  /** The error response: the redirect URI with error, error_description, state and iss. */
  location: string;
}

/** Read scopes are granted when a client asks for none (ADR 0143): least privilege that still does something. */
export const DEFAULT_SCOPES: Scope[] = PRODUCT_SCOPES.filter((s) => s.endsWith('_READ'));
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

const one = (query: Record<string, unknown>, name: string): string | undefined => {
  const v = query[name];
  return typeof v === 'string' ? v : undefined;
};

/**
 * A query string as the authorization endpoint reads it: a repeated name keeps every value (a
 * list), as Fastify's parser does, so the consent steps, which read the request from a form
 * field, judge it exactly as `/oauth/authorize` did (a last-wins parse would let the screen show
 * one scope and grant another). Null prototype: the names are client input.
 */
export function parseAuthorizationQuery(raw: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  for (const [name, value] of new URLSearchParams(raw)) {
    const seen = out[name];
    out[name] = seen === undefined ? value : ([] as string[]).concat(seen, value);
  }
  return out;
}

/**
 * RFC 6749 §3.1: parameters "MUST NOT be included more than once". `resource` may repeat
 * (RFC 8707); several are refused as invalid_target (ADR 0146).
 */
const repeatedParameter = (query: Record<string, unknown>) => Object.keys(query).find((name) => name !== 'resource' && Array.isArray(query[name]));
const givenOnce = (name: string) => `${name} must be given once`;

/**
 * An error_description as RFC 6749 §4.1.2.1 allows it (%x20-21 / %x23-5B / %x5D-7E): what the
 * client sent (a scope, a parameter's name) may hold any character; each other one reads `?`.
 * The page shows the description as it is.
 */
export const errorDescription = (text: string) => text.replace(/[^\x20\x21\x23-\x5B\x5D-\x7E]/gu, '?');

/** The client's redirect URI with the answer's parameters, `state` and `iss` (RFC 9207). */
export function redirectBack(redirectUri: string, state: string | null, issuer: string, params: Record<string, string>): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  if (state !== null) url.searchParams.set('state', state);
  url.searchParams.set('iss', issuer);
  return url.toString();
}

/**
 * Checks the client and the exact redirect URI first (failures there are never sent to the
 * client: nothing to trust), then the rest, whose failures go back to the client once the user
 * has signed in and follows the error page's link (ADR 0357).
 */
export async function checkAuthorizationRequest(
  query: Record<string, unknown>,
  clients: ClientDirectory,
  config: OAuthConfig,
): Promise<{ ok: AuthorizationRequest } | UntrustedFailure | RedirectFailure> {
  const issuer = config.publicUrl;
  // Neither a client nor a redirect URI given twice can be trusted with a redirect.
  for (const name of ['client_id', 'redirect_uri']) if (Array.isArray(query[name])) return { kind: 'page', description: `${givenOnce(name)}.` };
  const clientId = one(query, 'client_id');
  if (!clientId) return { kind: 'page', description: 'The request has no client_id.' };
  const found = await clients.lookup(clientId);
  if ('problem' in found) return { kind: 'page', description: found.problem };
  const { client } = found;
  const asked = one(query, 'redirect_uri');
  // OAuth 2.1 §4.1.1 lets a client with one registered URI omit it; the match is exact otherwise (but a loopback IP's port).
  const redirectUri = asked ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined);
  if (!redirectUri || !isRegisteredRedirect(client.redirectUris, redirectUri)) return { kind: 'page', description: 'The redirect_uri is not one this application registered.' };

  const state = one(query, 'state') ?? null;
  const fail = (error: string, description: string): RedirectFailure => ({
    kind: 'redirect',
    client,
    redirectUri,
    description,
    location: redirectBack(redirectUri, state, issuer, { error, error_description: errorDescription(description) }),
  });
  const repeated = repeatedParameter(query);
  if (repeated !== undefined) return fail('invalid_request', givenOnce(repeated));
  const responseType = one(query, 'response_type');
  if (responseType === undefined || responseType === '') return fail('invalid_request', 'response_type is required ("code")');
  if (responseType !== 'code') return fail('unsupported_response_type', 'response_type must be "code"');
  const challenge = one(query, 'code_challenge');
  if (!challenge) return fail('invalid_request', 'code_challenge is required (PKCE)');
  if (one(query, 'code_challenge_method') !== 'S256') return fail('invalid_request', 'code_challenge_method must be "S256" ("plain" is refused)');
  if (!S256_CHALLENGE.test(challenge)) return fail('invalid_request', 'code_challenge must be the base64url SHA-256 of the verifier (43 characters)');
  const scopeText = one(query, 'scope');
  // A client that registered a scope asks within it; asking none, it gets the defaults it registered (RFC 7591 §2).
  const registered = registeredScopes(client.scope);
  const scopes = scopeText ? scopeList(scopeText) : DEFAULT_SCOPES.filter((s) => !registered || registered.has(s));
  const unknown = unknownScopes(scopes);
  if (unknown.length) return fail('invalid_scope', `unknown scope ${unknown.join(', ')}`);
  const beyond = registered ? scopes.filter((s) => !registered.has(s)) : [];
  if (beyond.length) return fail('invalid_scope', `scope beyond the client's registration: ${beyond.join(', ')}`);
  if (!scopeText && scopes.length === 0) return fail('invalid_scope', 'scope is required: the client registered none of the default read scopes');
  const resource = checkResource(query.resource, config.resource);
  if (resource === undefined) return fail('invalid_target', `resource must be ${config.resource}, this API`);
  return { ok: { client, redirectUri, redirectUriSent: asked !== undefined, state, scopes: scopes as Scope[], codeChallenge: challenge, resource } };
}

/**
 * RFC 8707: the one resource this server issues tokens for, with or without its trailing
 * slash; null when the client names none; undefined (invalid_target) for anything else,
 * several resources included (ADR 0146).
 */
export function checkResource(value: unknown, resource: string): string | null | undefined {
  if (value === undefined || value === '') return null;
  return value === resource || value === `${resource}/` ? resource : undefined;
}
