/**
 * A store (or peer) an app needs before it can serve. `check` throws when the store
 * does not answer; `/readyz` names the failing check so an operator sees which store is down.
 */
export interface ReadinessCheck {
  name: string;
  check(signal: AbortSignal): Promise<void>;
}

export const READINESS_CHECKS = Symbol('READINESS_CHECKS');
export const READINESS_TIMEOUT_MS = 2000;
