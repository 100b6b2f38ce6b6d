import { resolveRateLimits } from '../../public-api/rate-limit/limits';
import { type LocalWindow, localWindow } from '../../public-api/rate-limit/local-window';

export const ADMIN_LIMITS = Symbol('ADMIN_LIMITS');

/** Admin API limits per client IP, in process (ADR 0123): every request, and wrong admin tokens (far fewer). */
export interface AdminLimits {
  requests: LocalWindow;
  failures: LocalWindow;
}

export function loadAdminLimits(env: NodeJS.ProcessEnv = process.env): AdminLimits {
  const limits = resolveRateLimits(env.MELD_RATE_LIMITS);
  return { requests: localWindow(limits, 'admin'), failures: localWindow(limits, 'adminFailures') };
}
