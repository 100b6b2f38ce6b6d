import { APPS, type AppName, INTERNAL_APPS, appUrlEnv } from '@meld/contracts';
import { envVars, loadConfig } from '@meld/platform';
import { z } from 'zod';

export const APP_URLS = Symbol('APP_URLS');

/** Internal base URL of each app: `MELD_<APP>_URL`, defaulting to its local port on loopback. */
export function loadAppUrls(env: NodeJS.ProcessEnv = process.env): Record<AppName, string> {
  const shape = Object.fromEntries(INTERNAL_APPS.map((a) => [appUrlEnv(a), envVars.httpUrl.default(`http://127.0.0.1:${APPS[a].port}`)]));
  const parsed = loadConfig(z.object(shape), env) as Record<string, string>;
  return Object.fromEntries(INTERNAL_APPS.map((a) => [a, parsed[appUrlEnv(a)].replace(/\/$/, '')])) as Record<AppName, string>;
}
