import { Gauge } from 'prom-client';
import { metricsRegistry } from '../metrics/metrics';
import type { ReadinessCheck } from './readiness-check';

/**
 * The outcome of each readiness check, for the "store down" alert (ADR 0175). Set where the
 * outcome is already known: every /readyz, which the kubelet asks every few seconds.
 */
const checkUp = new Gauge({
  name: 'meld_readiness_check_up',
  help: '1 when the last readiness check of this store (or peer) answered, 0 when it failed or timed out',
  labelNames: ['check'],
  registers: [metricsRegistry],
});

/** Runs `check`, recording its outcome under its name; rethrows its error. */
export async function runReadinessCheck(check: ReadinessCheck, signal: AbortSignal): Promise<void> {
  try {
    await check.check(signal);
    checkUp.labels(check.name).set(1);
  } catch (err) {
    checkUp.labels(check.name).set(0);
    throw err;
  }
}
