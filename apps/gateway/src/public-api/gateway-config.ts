import { type PlanGates, PrincipalKeyring, parsePlanGates } from '@meld/auth';
import { envVars, loadConfig, loadPrincipalMasterKey, loadPublicUrl } from '@meld/platform';
import { z } from 'zod';
import { type RateLimits, resolveRateLimits } from './rate-limit/limits';

export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');

export interface GatewayConfig {
  /** Signs principals with each app's key, derived from the master key once (ADR 0256). */
  principalKeys: PrincipalKeyring;
  redisUrl: string;
  redisTimeoutMs: number;
  rateLimits: RateLimits;
  /** Prefix of the rate-limit keys: replicas of one deployment share it; tests isolate themselves with their own. */
  rateLimitNamespace: string;
  /** How long a cached token or project may be used without re-reading Postgres. */
  cacheTtlMs: number;
  /** How long an unknown token hash is answered from memory (ADR 0123). */
  negativeCacheTtlMs: number;
  /** The public API origin, without a trailing slash: RFC 9728 discovery from a 401 (ADR 0145). */
  publicUrl: string;
  /** The smallest plan of each plan-gated scope (`MELD_PLAN_GATED_SCOPES`, ADR 0328); empty: every plan. */
  planGates: PlanGates;
}

/** The public API's settings, validated at start (a bad `MELD_RATE_LIMITS` stops the gateway with a clear line). */
export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const c = loadConfig(
    z.object({
      MELD_REDIS_URL: envVars.redisUrl,
      MELD_REDIS_TIMEOUT_MS: envVars.redisTimeoutMs,
      MELD_RATE_LIMITS: z.string().optional(),
      MELD_RATE_LIMIT_NAMESPACE: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/).default('meld'),
      MELD_GATEWAY_CACHE_TTL_MS: z.coerce.number().int().min(0).max(300_000).default(5000),
      MELD_GATEWAY_NEGATIVE_CACHE_TTL_MS: z.coerce.number().int().min(0).max(60_000).default(2000),
      MELD_PLAN_GATED_SCOPES: z.string().optional(),
    }),
    env,
  );
  return {
    principalKeys: new PrincipalKeyring(loadPrincipalMasterKey(env)),
    redisUrl: c.MELD_REDIS_URL,
    redisTimeoutMs: c.MELD_REDIS_TIMEOUT_MS,
    rateLimits: resolveRateLimits(c.MELD_RATE_LIMITS),
    rateLimitNamespace: c.MELD_RATE_LIMIT_NAMESPACE,
    cacheTtlMs: c.MELD_GATEWAY_CACHE_TTL_MS,
    negativeCacheTtlMs: c.MELD_GATEWAY_NEGATIVE_CACHE_TTL_MS,
    publicUrl: loadPublicUrl(env),
    planGates: parsePlanGates(c.MELD_PLAN_GATED_SCOPES),
  };
}
