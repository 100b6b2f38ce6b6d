import { loadConfig, requireNonDevSecret } from '@meld/platform';
import { z } from 'zod';

export const ADMIN_CONFIG = Symbol('ADMIN_CONFIG');
/** The local default, printed by `npm start`; accepted from loopback only (see AdminTokenGuard). */
export const DEV_ADMIN_TOKEN = 'meld-dev-admin';
/** Admin tokens anyone can read in this repository: refused outside the local stack (ADR 0101). */
const PUBLIC_ADMIN_TOKENS = [DEV_ADMIN_TOKEN, 'meld-test-admin'];

export interface AdminConfig {
  token: string;
  loopbackOnly: boolean;
}

export function loadAdminConfig(env: NodeJS.ProcessEnv = process.env): AdminConfig {
  requireNonDevSecret(env, 'MELD_ADMIN_TOKEN', PUBLIC_ADMIN_TOKENS);
  const { MELD_ADMIN_TOKEN } = loadConfig(z.object({ MELD_ADMIN_TOKEN: z.string().min(12, 'must be at least 12 characters').optional() }), env);
  const token = MELD_ADMIN_TOKEN ?? DEV_ADMIN_TOKEN;
  return { token, loopbackOnly: token === DEV_ADMIN_TOKEN };
}
