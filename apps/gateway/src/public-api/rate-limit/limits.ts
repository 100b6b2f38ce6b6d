import { PLANS, type Plan, RATE_LIMIT_CLASSES, type RateLimitClass } from '@meld/contracts';
import { z } from 'zod';

/**
 * Rate-limit classes and their per-plan ceilings (system design §4), per fixed window.
 * `anonymous` is ours: requests without a valid token are counted per client IP, so
 * token guessing and floods of bad requests are throttled too.
 */
export type LimitClass = RateLimitClass | 'anonymous' | 'oauth' | 'links';
/**
 * Per client IP, in process, before any lookup (ADR 0123): `client` every public request,
 * `authFailures` presented tokens that were not valid, `admin` every admin API request,
 * `adminFailures` wrong admin tokens. The same for every plan (no token is known yet).
 */
export type LocalLimitClass = 'client' | 'authFailures' | 'admin' | 'adminFailures';
const LOCAL_LIMIT_CLASSES: readonly LocalLimitClass[] = ['client', 'authFailures', 'admin', 'adminFailures'];
export const LIMIT_CLASSES: readonly (LimitClass | LocalLimitClass)[] = [...RATE_LIMIT_CLASSES, 'anonymous', 'oauth', 'links', ...LOCAL_LIMIT_CLASSES];

export interface ClassLimits {
  windowMs: number;
  perPlan: Record<Plan, number>;
}
export type RateLimits = Record<LimitClass | LocalLimitClass, ClassLimits>;

const MINUTE = 60_000;
const plans = (s: number, m: number, l: number, xl: number): Record<Plan, number> => ({ s, m, l, xl });

export const DEFAULT_RATE_LIMITS: RateLimits = {
  large: { windowMs: MINUTE, perPlan: plans(120, 600, 1200, 3000) },
  // The design gives s 60 and xl 1200; m and l are interpolated (5x and 10x s).
  standard: { windowMs: MINUTE, perPlan: plans(60, 300, 600, 1200) },
  probes: { windowMs: MINUTE, perPlan: plans(6, 12, 30, 60) },
  ingest: { windowMs: MINUTE, perPlan: plans(600, 3000, 12000, 60000) },
  anonymous: { windowMs: MINUTE, perPlan: plans(60, 60, 60, 60) },
  // A flood guard, not a quota: above the largest plan's ingest rate from one client.
  client: { windowMs: MINUTE, perPlan: plans(60000, 60000, 60000, 60000) },
  authFailures: { windowMs: MINUTE, perPlan: plans(60, 60, 60, 60) },
  admin: { windowMs: MINUTE, perPlan: plans(600, 600, 600, 600) },
  adminFailures: { windowMs: MINUTE, perPlan: plans(10, 10, 10, 10) },
  // Per client IP on the OAuth endpoints (ADR 0145): one sign-in and approval is ~8 requests.
  oauth: { windowMs: MINUTE, perPlan: plans(120, 120, 120, 120) },
  // Per client IP on the SMS link routes (ADR 0182): a person clicks a few links; a carrier NAT shares one IP among many.
  links: { windowMs: MINUTE, perPlan: plans(300, 300, 300, 300) },
};

const positive = z.number().int().min(1);
const classOverride = z
  .object({ windowSeconds: positive.max(86_400).optional(), limit: positive.optional(), s: positive.optional(), m: positive.optional(), l: positive.optional(), xl: positive.optional() })
  .strict();
const overrides = z.object(Object.fromEntries(LIMIT_CLASSES.map((c) => [c, classOverride.optional()]))).strict();

/**
 * `MELD_RATE_LIMITS` (JSON) deep-merged over the defaults, e.g.
 * `{"large":{"s":200},"ingest":{"windowSeconds":10,"limit":100},"anonymous":{"limit":30}}`:
 * `limit` sets every plan, a plan key sets one, `windowSeconds` the window length.
 */
export function resolveRateLimits(json: string | undefined): RateLimits {
  if (!json) return DEFAULT_RATE_LIMITS;
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new Error('MELD_RATE_LIMITS: not valid JSON');
  }
  const parsed = overrides.safeParse(raw);
  if (!parsed.success) {
    throw new Error(`MELD_RATE_LIMITS: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  }
  const out = {} as RateLimits;
  for (const cls of LIMIT_CLASSES) {
    const o = (parsed.data as Record<string, z.infer<typeof classOverride> | undefined>)[cls] ?? {};
    const base = DEFAULT_RATE_LIMITS[cls];
    const perPlan = { ...base.perPlan };
    for (const plan of PLANS) perPlan[plan] = o[plan] ?? o.limit ?? perPlan[plan];
    out[cls] = { windowMs: o.windowSeconds ? o.windowSeconds * 1000 : base.windowMs, perPlan };
  }
  return out;
}
