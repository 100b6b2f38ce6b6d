import { type KeyObject, createHash, createSecretKey, hkdfSync, randomBytes } from 'node:crypto';

const RAW_KEY = /^[A-Za-z0-9_-]{43}$/;
/** HKDF's `info`: a key derived for one app never equals another app's (ADR 0256). */
const INFO = 'meld principal key: ';

export class PrincipalKeyError extends Error {}

/**
 * The variable an internal app reads its own principal key from: one name per app, so a
 * deployment that hands an app another app's key fails at start naming the variable.
 */
export function principalKeyEnv(app: string): string {
  return `MELD_PRINCIPAL_KEY_${app.toUpperCase().replace(/-/g, '_')}`;
}

/** A principal key (the gateway's master key or one app's key): 32 bytes in base64url. */
export function parsePrincipalKey(text: string): KeyObject {
  const trimmed = text.trim();
  if (!RAW_KEY.test(trimmed)) throw new PrincipalKeyError('must be 32 bytes in base64url (npx meld keys)');
  return createSecretKey(Buffer.from(trimmed, 'base64url'));
}

/**
 * One app's key: HKDF-SHA256 of the gateway's master key with the app's name. The gateway
 * derives every app's key; each app is given only its own (ADR 0256). `tools/cli/commands/keys.js`
 * derives the same way (plain JavaScript, before any build; a spec checks they agree).
 */
export function derivePrincipalKey(master: KeyObject, app: string): KeyObject {
  return createSecretKey(Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), INFO + app, 32)));
}

/** The 32 bytes of a key, base64url: the form `meld keys` prints and the env vars take. */
export function rawKey(key: KeyObject): string {
  return key.export().toString('base64url');
}

/** Env variables of fresh principal keys: the gateway's master key and the own key of each of `apps`. */
export function generatePrincipalKeys(apps: readonly string[]): Record<string, string> {
  const master = createSecretKey(randomBytes(32));
  return { MELD_PRINCIPAL_MASTER_KEY: rawKey(master), ...Object.fromEntries(apps.map((app) => [principalKeyEnv(app), rawKey(derivePrincipalKey(master, app))])) };
}

/** The gateway's keys: each app's key derived once, on first use, and kept. */
export class PrincipalKeyring {
  private readonly keys = new Map<string, KeyObject>();

  constructor(private readonly master: KeyObject) {}

  forApp(app: string): KeyObject {
    let key = this.keys.get(app);
    if (!key) {
      key = derivePrincipalKey(this.master, app);
      this.keys.set(app, key);
    }
    return key;
  }
}

/**
 * The local stack's master key, derived from a public phrase so that `npm start`, `npm test` and
 * apps started by hand agree without passing keys around. Everybody can compute it and every
 * key derived from it: apps refuse them outside the local stack (ADR 0101, ADR 0256).
 */
export const DEV_PRINCIPAL_MASTER_KEY = createSecretKey(createHash('sha256').update('meld local stack principal key: never outside the local stack').digest());

const devKeys = new PrincipalKeyring(DEV_PRINCIPAL_MASTER_KEY);

/** The local stack's key of one app. */
export function devPrincipalKey(app: string): KeyObject {
  return devKeys.forApp(app);
}
