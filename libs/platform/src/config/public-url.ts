import { loadConfig, envVars } from './load-config';
import { configError, devSecretsAllowed, DEV_SECRETS_VAR } from './secrets';
import { z } from 'zod';

/** Where the local stack's gateway listens (`meld start`). */
const LOCAL_PUBLIC_URL = 'http://127.0.0.1:8080';

/**
 * The public API origin (`MELD_PUBLIC_URL`, no trailing slash): SMS short and unsubscribe links
 * without a tracking domain, the OAuth issuer and metadata URLs, the 401's `resource_metadata`.
 * The local stack may leave it unset (the gateway's loopback address); anywhere else it is
 * required, because the fallback would put a loopback address into messages sent to people and
 * into OAuth metadata (ADR 0101's rule for development values).
 */
export function loadPublicUrl(env: NodeJS.ProcessEnv = process.env): string {
  const { MELD_PUBLIC_URL } = loadConfig(z.object({ MELD_PUBLIC_URL: envVars.httpUrl.optional() }), env);
  if (MELD_PUBLIC_URL) return MELD_PUBLIC_URL.replace(/\/+$/, '');
  if (devSecretsAllowed(env)) return LOCAL_PUBLIC_URL;
  throw configError('MELD_PUBLIC_URL', `required outside the local stack (${DEV_SECRETS_VAR}=1 without NODE_ENV=production): the public origin of the API, e.g. https://api.example.com (docs/deploy.md)`);
}
