/**
 * A store (or peer) an app needs before it can serve. `check` throws when the store
 * does not answer; `/readyz` names the failing check so an operator sees which store is down.
 */
export interface ReadinessCheck {
  name: string;
  check(signal: AbortSignal): Promise<void>;
  /**
   * What a failure of this check does to `/readyz`: `down` (the default) answers 503, the process
   * is not ready; `degraded` answers 200 with `status: "degraded"` and the check's error under
   * its name, for a peer whose loss leaves the process useful (messaging's SMSC session in the
   * `all` role, ADR 0348). The gateway's system check counts a degraded app as not ready.
   */
  failure?: 'down' | 'degraded';
}

export const READINESS_CHECKS = Symbol('READINESS_CHECKS');
export const READINESS_TIMEOUT_MS = 2000;
