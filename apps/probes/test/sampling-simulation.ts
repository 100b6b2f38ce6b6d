import { join } from 'node:path';

/**
 * What the estimator simulations share (apps/probes/src/shared/estimators-*.spec.ts): a seeded
 * generator and the probe's sampling, where every contact is in or out independently with the
 * band's fraction (its hash bucket).
 */

/** mulberry32, the seed generator's PRNG: a fixed seed gives the same figures on every run. */
export const seeded: (seed: number) => () => number = require(join(__dirname, '../../../tools/seed/generator.js')).rng;

// Jest runs a suite in a vm context, where every read of a global (`Math`) goes through the
// context's interceptors and is not optimised: tens of millions of them made this loop ten times
// slower than in plain Node (ADR 0305). Module-scope copies are plain closure reads.
const { floor, log } = Math;

/** Exact Binomial(trials, p) by skipping geometric gaps between successes: cost ~ trials·p. */
export function binomial(random: () => number, trials: number, p: number): number {
  const logQ = log(1 - p);
  let successes = 0;
  let position = floor(log(1 - random()) / logQ);
  while (position < trials) {
    successes++;
    position += 1 + floor(log(1 - random()) / logQ);
  }
  return successes;
}
