import { monitorEventLoopDelay } from 'node:perf_hooks';
import { openLoop } from './load';

describe('openLoop', () => {
  it('issues every call at its rate and sleeps until the next one is due instead of ticking', async () => {
    // How late this process's timers ran meanwhile: on a loaded machine it is descheduled for
    // hundreds of ms (1,420 ms seen for the 50th call in a full `npm test`), and the loop cannot
    // issue a call while it is not running.
    const stalls = monitorEventLoopDelay({ resolution: 5 });
    stalls.enable();
    const timers = jest.spyOn(global, 'setTimeout');
    const issuedAt: number[] = [];
    const t0 = Date.now();
    const r = await openLoop(50, 1, 0, async () => {
      issuedAt.push(Date.now() - t0);
      return true;
    });
    const timerCount = timers.mock.calls.length;
    timers.mockRestore();
    stalls.disable();
    const worstStallMs = stalls.max / 1e6;
    expect(r.sent).toBe(50);
    expect(r.latencies).toHaveLength(50);
    expect(r.errors).toBe(0);
    // Call k is due at k × 20 ms: none starts early, and the loop keeps pace: the last call is
    // late by at most one stall, not by lateness piled up over the second.
    issuedAt.forEach((at, k) => expect(at).toBeGreaterThanOrEqual(k * 20 - 1));
    expect(issuedAt[49]).toBeLessThan(49 * 20 + 200 + worstStallMs);
    // About one timer per call (a 1 ms tick would be ~1,000 in this second).
    expect(timerCount).toBeLessThan(120);
  });

  it('charges a stall to the calls it delayed (latency from when each was due)', async () => {
    let first = true;
    const r = await openLoop(100, 0.3, 0, async () => {
      if (first) {
        first = false;
        const until = Date.now() + 100;
        while (Date.now() < until); // blocks the loop: the next ~10 calls go out late
      }
      return true;
    });
    expect(r.sent).toBe(30);
    expect(Math.max(...r.latencies)).toBeGreaterThanOrEqual(80);
  });
});
