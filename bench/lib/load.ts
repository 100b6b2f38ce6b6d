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
