/** What a closed-loop run measured (warm-up excluded, except `sent`). */
export interface LoopResult {
  /** Latency in ms of every call answered while measuring. */
  latencies: number[];
  /** Calls answered while measuring whose `call` returned false. */
  errors: number;
  /** Every call answered, warm-up included (CPU figures cover the whole load). */
  sent: number;
  elapsedS: number;
}

/**
 * Closed loop: `workers` callers each make the next call as soon as the last one is
 * answered; after `warmupSeconds`, latencies and errors are recorded for `seconds`.
 * `call` resolves true on success.
 */
export async function closedLoop(workers: number, seconds: number, warmupSeconds: number, call: () => Promise<boolean>): Promise<LoopResult> {
  const latencies: number[] = [];
  let errors = 0;
  let sent = 0;
  let measuring = false;
  let stop = false;
  const worker = async () => {
    while (!stop) {
      const t0 = process.hrtime.bigint();
      const ok = await call();
      sent++;
      if (!measuring) continue;
      if (!ok) errors++;
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  };
  const running = Array.from({ length: workers }, worker);
  await new Promise((r) => setTimeout(r, warmupSeconds * 1000));
  measuring = true;
  const started = process.hrtime.bigint();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  measuring = false;
  const elapsedS = Number(process.hrtime.bigint() - started) / 1e9;
  stop = true;
  await Promise.all(running);
  return { latencies, errors, sent, elapsedS };
}

/**
 * Open loop: calls start at `ratePerS` whatever the answers (clients that do not wait for each
 * other), for `seconds` after `warmupSeconds`. A call's latency counts from when it was due,
 * not from when the timer got to it, so a stall is charged to every call it delayed (no
 * coordinated omission). `elapsedS` is the measured window; calls still in flight at its end
 * are awaited and counted.
 */
export async function openLoop(ratePerS: number, seconds: number, warmupSeconds: number, call: () => Promise<boolean>): Promise<LoopResult> {
  const latencies: number[] = [];
  let errors = 0;
  let sent = 0;
  const inFlight = new Set<Promise<void>>();
  const t0 = process.hrtime.bigint();
  const msSince = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;
  const total = Math.floor(ratePerS * (warmupSeconds + seconds));
  const firstMeasured = Math.floor(ratePerS * warmupSeconds);
  let issued = 0;
  while (issued < total) {
    const due = Math.min(total, Math.floor((msSince(t0) / 1000) * ratePerS) + 1);
    for (; issued < due; issued++) {
      const dueAtMs = (issued / ratePerS) * 1000;
      const measured = issued >= firstMeasured;
      const p = call().then(
        (ok) => {
          sent++;
          if (!measured) return;
          if (!ok) errors++;
          latencies.push(msSince(t0) - dueAtMs);
        },
        () => {
          sent++;
          if (measured) errors++;
        },
      );
      const tracked = p.finally(() => inFlight.delete(tracked));
      inFlight.add(tracked);
    }
    // Sleep until the next call is due, not a fixed 1 ms tick: the tick woke the bench ~1,000
    // times a second on the box it measures (≈3x its CPU per call at 100 calls/s, and a
    // preemption of whatever ran on that core each time). A late timer delays no measurement:
    // latency counts from when a call was due.
    if (issued < total) await new Promise((r) => setTimeout(r, Math.max(1, (issued / ratePerS) * 1000 - msSince(t0))));
  }
  await Promise.all([...inFlight]);
  return { latencies, errors, sent, elapsedS: seconds };
}

/**
 * Closed loop over a fixed amount of work: `workers` callers take call indexes 0..calls-1 in
 * turn, each making its next call as soon as the last one is answered. Every call is measured.
 */
export async function closedLoopOver(workers: number, calls: number, call: (index: number) => Promise<boolean>): Promise<LoopResult> {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = process.hrtime.bigint();
  const worker = async () => {
    while (next < calls) {
      const index = next++;
      const t0 = process.hrtime.bigint();
      const ok = await call(index);
      if (!ok) errors++;
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  return { latencies, errors, sent: calls, elapsedS: Number(process.hrtime.bigint() - started) / 1e9 };
}
