import type { KeyObject } from 'node:crypto';
import { DEV_PRINCIPAL_MASTER_KEY, PrincipalKeyError, devPrincipalKey, parsePrincipalKey, principalKeyEnv } from '@meld/auth';

/**
 * The local stack's switch (ADR 0101): only `meld start`, `meld test`, the local app
 * supervisor and the test fixtures set it. Without it, or with NODE_ENV=production, an app
 * refuses the well-known development secrets instead of running with them.
 */
export const DEV_SECRETS_VAR = 'MELD_ALLOW_DEV_SECRETS';

export function devSecretsAllowed(env: NodeJS.ProcessEnv): boolean {
  return env[DEV_SECRETS_VAR] === '1' && env.NODE_ENV !== 'production';
}

/** The same one-line-per-variable message as loadConfig. */
export function configError(variable: string, message: string): Error {
  return new Error(`invalid configuration:\n  ${variable}: ${message}`);
}

const OUTSIDE = `outside the local stack (${DEV_SECRETS_VAR}=1 without NODE_ENV=production)`;
const HOW = 'generate the keys with `npx meld keys` (docs/deploy.md)';

function key(env: NodeJS.ProcessEnv, variable: string, dev: KeyObject): KeyObject {
  const text = env[variable];
  if (!text) {
    if (devSecretsAllowed(env)) return dev;
    throw configError(variable, `required ${OUTSIDE}: ${HOW}`);
  }
  let parsed: KeyObject;
  try {
    parsed = parsePrincipalKey(text);
  } catch (err) {
    if (err instanceof PrincipalKeyError) throw configError(variable, err.message);
    throw err;
  }
  if (parsed.equals(dev) && !devSecretsAllowed(env)) throw configError(variable, `is the public development key, refused ${OUTSIDE}: ${HOW}`);
  return parsed;
}

/** An internal app: its own principal key, which checks the principals made for it (ADR 0256). */
export function loadPrincipalAppKey(app: string, env: NodeJS.ProcessEnv = process.env): KeyObject {
  return key(env, principalKeyEnv(app), devPrincipalKey(app));
}

/** The gateway: the master key every app's principal key is derived from; no other app is given it. */
export function loadPrincipalMasterKey(env: NodeJS.ProcessEnv = process.env): KeyObject {
  return key(env, 'MELD_PRINCIPAL_MASTER_KEY', DEV_PRINCIPAL_MASTER_KEY);
}

/**
 * A secret with a well-known development value (e.g. the admin token) is refused outside
 * the local stack, and so is leaving it unset when the app would fall back to that value.
 */
export function requireNonDevSecret(env: NodeJS.ProcessEnv, variable: string, devValues: readonly string[]): void {
  if (devSecretsAllowed(env)) return;
  const value = env[variable];
  if (!value) throw configError(variable, `required ${OUTSIDE}`);
  if (devValues.includes(value)) throw configError(variable, `is a public development value, refused ${OUTSIDE}: set a secret of this deployment`);
}
