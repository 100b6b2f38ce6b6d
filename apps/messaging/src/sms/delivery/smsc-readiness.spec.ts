import type { SmscState } from './smsc-client';
import { SMSC_UNBOUND_GRACE_MS, smscChecks } from './smsc-readiness';

const signal = new AbortController().signal;
const at = (state: SmscState, now: number) => smscChecks({ state: () => state }, 'delivery', () => now)[0]!.check(signal);

describe('the SMSC readiness check (ADR 0348)', () => {
  it('is there for the processes that deliver only: down for delivery, degraded for all, none for api', () => {
    const session = { state: (): SmscState => ({ bound: true, since: 0 }) };
    expect(smscChecks(session, 'delivery').map((c) => [c.name, c.failure])).toEqual([['smsc', 'down']]);
    expect(smscChecks(session, 'all').map((c) => [c.name, c.failure])).toEqual([['smsc', 'degraded']]);
    expect(smscChecks(session, 'api')).toEqual([]);
  });

  it('passes while bound, and while unbound for less than the grace; fails after it with the reason', async () => {
    await expect(at({ bound: true, since: 0 }, 10 * SMSC_UNBOUND_GRACE_MS)).resolves.toBeUndefined();
    await expect(at({ bound: false, since: 1000, reason: 'session error ECONNREFUSED' }, 1000 + SMSC_UNBOUND_GRACE_MS - 1)).resolves.toBeUndefined();
    await expect(at({ bound: false, since: 1000, reason: 'session error ECONNREFUSED' }, 1000 + 12_400)).rejects.toThrow('no SMPP session bound for 12 s (session error ECONNREFUSED); sends stay enqueued until it binds');
    await expect(at({ bound: false, since: 0 }, SMSC_UNBOUND_GRACE_MS)).rejects.toThrow('(connecting)');
  });
});
