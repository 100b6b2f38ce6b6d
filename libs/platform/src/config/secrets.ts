import type { KeyObject } from 'node:crypto';
import { DEV_PRINCIPAL_KEYS, PrincipalKeyError, isDevKey, parsePrivateKey, parsePublicKey } from '@meld/auth';

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
const HOW = 'generate a pair with `npx meld keys` (docs/deploy.md)';

function key<K>(env: NodeJS.ProcessEnv, variable: string, parse: (text: string) => K & KeyObject, dev: K): K {
  const text = env[variable];
  if (!text) {
    if (devSecretsAllowed(env)) return dev;
    throw configError(variable, `required ${OUTSIDE}: ${HOW}`);
  }
  let parsed: K & KeyObject;
  try {
    parsed = parse(text);
  } catch (err) {
    if (err instanceof PrincipalKeyError) throw configError(variable, err.message);
    throw err;
  }
  if (isDevKey(parsed) && !devSecretsAllowed(env)) throw configError(variable, `is the public development key, refused ${OUTSIDE}: ${HOW}`);
  return parsed;
}

/** Internal apps: the gateway's public key, which verifies principals (ADR 0102). */
export function loadPrincipalPublicKey(env: NodeJS.ProcessEnv = process.env): KeyObject {
  return key(env, 'MELD_PRINCIPAL_PUBLIC_KEY', parsePublicKey, DEV_PRINCIPAL_KEYS.publicKey);
}

/** The gateway: the private key that signs principals; no other app is given it. */
export function loadPrincipalPrivateKey(env: NodeJS.ProcessEnv = process.env): KeyObject {
  return key(env, 'MELD_PRINCIPAL_PRIVATE_KEY', parsePrivateKey, DEV_PRINCIPAL_KEYS.privateKey);
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
