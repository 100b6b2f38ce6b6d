import type { ReadinessCheck } from '@meld/platform';
import { delivers, type MessagingRole } from '../../messaging-role';
import type { SmscState } from './smsc-client';

/**
 * How long the SMPP session may stay unbound before readiness says so (ADR 0348). The client
 * re-binds after 0.5, 1, 2 and 4 s (ADR 0153): those four attempts, 7.5 s, and their binds fit
 * in it, so an SMSC restart or a dropped connection that comes straight back does not flap
 * readiness; a session still down after them is an outage. With the kubelet's two failures 5 s
 * apart, a delivery pod leaves Ready about 20 s after its session is lost.
 */
export const SMSC_UNBOUND_GRACE_MS = 10_000;

/**
 * The readiness check of the SMPP session, for the processes that deliver (ADR 0348): none for
 * `api`, which has no session; `down` for `delivery`, whose one job is that session; `degraded`
 * for `all`, whose API still stores and queues sends while the SMSC is gone (the process stays
 * ready, the gateway's system check counts it as not ready).
 */
export function smscChecks(session: { state(): SmscState }, role: MessagingRole, now: () => number = Date.now): ReadinessCheck[] {
  if (!delivers(role)) return [];
  return [
    {
      name: 'smsc',
      failure: role === 'all' ? 'degraded' : 'down',
      async check() {
        const { bound, since, reason } = session.state();
        const unboundMs = now() - since;
        if (bound || unboundMs < SMSC_UNBOUND_GRACE_MS) return;
        // The reason is an error code or an SMPP status, never the URL (it carries the credentials).
        throw new Error(`no SMPP session bound for ${Math.round(unboundMs / 1000)} s (${reason ?? 'connecting'}); sends stay enqueued until it binds`);
      },
    },
  ];
}
