import { PLANS, type Plan, type Scope } from '@meld/contracts';

/** The scopes the product spec calls plan-gated (Authentication, scope table). */
export const PLAN_GATED_SCOPES = ['PROJECT_AUDIENCE_LIST', 'PROJECT_AUDIENCE_DATA_BASIC', 'PROJECT_AUDIENCE_DATA_EVENTS'] as const satisfies readonly Scope[];
export type PlanGatedScope = (typeof PLAN_GATED_SCOPES)[number];

/** The smallest plan that unlocks each gated scope; a scope not listed is open on every plan (ADR 0328). */
export type PlanGates = ReadonlyMap<PlanGatedScope, Plan>;

export const NO_PLAN_GATES: PlanGates = new Map();

/**
 * `MELD_PLAN_GATED_SCOPES`: `SCOPE=plan` pairs separated by commas (`PROJECT_AUDIENCE_LIST=m`);
 * empty or unset gates nothing. A wrong entry throws, naming it, so the gateway does not start
 * with a gate it would not apply.
 */
export function parsePlanGates(text: string | undefined): PlanGates {
  const gates = new Map<PlanGatedScope, Plan>();
  for (const entry of (text ?? '').split(',').map((e) => e.trim()).filter(Boolean)) {
    const [scope, plan, extra] = entry.split('=').map((p) => p.trim());
    if (extra !== undefined || !scope || !plan) throw new Error(`MELD_PLAN_GATED_SCOPES: "${entry}" is not SCOPE=plan`);
    if (!(PLAN_GATED_SCOPES as readonly string[]).includes(scope)) throw new Error(`MELD_PLAN_GATED_SCOPES: ${scope} is not a plan-gated scope (${PLAN_GATED_SCOPES.join(', ')})`);
    if (!(PLANS as readonly string[]).includes(plan)) throw new Error(`MELD_PLAN_GATED_SCOPES: ${scope}=${plan}: the plan is one of ${PLANS.join(', ')}`);
    gates.set(scope as PlanGatedScope, plan as Plan);
  }
  return gates;
}

/** The scopes of a token that its organization's plan unlocks: a gated scope below its plan is dropped, as if not granted. */
export function scopesOnPlan(scopes: readonly Scope[], plan: Plan, gates: PlanGates): Scope[] {
  if (!gates.size) return [...scopes];
  const rank = PLANS.indexOf(plan);
  return scopes.filter((s) => {
    const least = gates.get(s as PlanGatedScope);
    return least === undefined || rank >= PLANS.indexOf(least);
  });
}
