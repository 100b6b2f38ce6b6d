import { loadConfig, loadPublicUrl } from '@meld/platform';
import { z } from 'zod';

export interface OAuthConfig {
  /** The public API host (the gateway): issuer, metadata URLs, `Secure` cookies outside loopback. */
  publicUrl: string;
  /** This API as an RFC 8707 resource (`<publicUrl>/v1`): the only one tokens are issued for (ADR 0146). */
  resource: string;
  /** Local stacks and tests: client metadata documents may be fetched over http from private addresses (ADR 0149). */
  allowPrivateFetch: boolean;
}

export const OAUTH_CONFIG = Symbol('OAUTH_CONFIG');

export function loadOAuthConfig(env: NodeJS.ProcessEnv = process.env): OAuthConfig {
  const { MELD_OAUTH_ALLOW_PRIVATE_FETCH } = loadConfig(z.object({ MELD_OAUTH_ALLOW_PRIVATE_FETCH: z.enum(['0', '1']).default('0') }), env);
  const publicUrl = loadPublicUrl(env);
  return { publicUrl, resource: `${publicUrl}/v1`, allowPrivateFetch: MELD_OAUTH_ALLOW_PRIVATE_FETCH === '1' };
}

/** Lifetimes (ADR 0142): access tokens as the issue asks, codes as RFC 6749 §4.1.2 advises. */
export const ACCESS_TOKEN_SECONDS = 3600;
export const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600;
export const CODE_SECONDS = 60;
export const SESSION_SECONDS = 3600;
