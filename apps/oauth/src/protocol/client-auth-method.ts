import { InvalidClientError } from '@node-oauth/oauth2-server';

/** An RFC 7591 `token_endpoint_auth_method`, or `several` for a request that used more than one (RFC 6749 §2.3). */
export type PresentedAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post' | 'several';

/**
 * How a token or revocation request authenticated its client: an `Authorization: Basic` header,
 * a `client_secret` in the form, both, or neither. Read from the request, not from what the
 * library made of it: the library takes whichever it finds first and ignores the other.
 */
export function presentedAuthMethod(headers: Record<string, string | string[] | undefined>, form: unknown): PresentedAuthMethod {
  const basic = /^\s*basic(\s|$)/i.test(String(headers.authorization ?? ''));
  const post = !!form && typeof form === 'object' && Object.hasOwn(form, 'client_secret');
  if (basic && post) return 'several';
  return basic ? 'client_secret_basic' : post ? 'client_secret_post' : 'none';
}

/**
 * A client authenticates the way it registered (RFC 7591 §2, OAuth 2.1 §2.4), ADR 0142: a
 * secret sent another way, or none from a confidential client, is refused before it is checked.
 * 401 as RFC 6749 §5.2 allows; the token endpoint adds the `WWW-Authenticate` challenge.
 */
export const wrongAuthMethod = (registered: string) =>
  new InvalidClientError(`Invalid client: token_endpoint_auth_method must be ${registered}, as registered`, { code: 401 });
