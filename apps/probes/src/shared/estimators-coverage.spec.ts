import { binomial, seeded } from '../../test/sampling-simulation';
import { Z95, estimateShare } from './estimators';

/**
 * How often countError covers the true count of a listed top value (issue 15: at least 95%), over
 * many samples of audiences whose truth is known, drawn as the probe samples: every contact in or
 * out independently with the band's fraction (its hash bucket), the ten commonest sampled values
 * listed. A fixed seed keeps the figures reproducible (ADR 0221).
 */

interface Audience {
  name: string;
  contacts: number;
  fraction: number;
  /** True contacts holding each value of one attribute (the other contacts hold none). */
  values: number[];
}

/** Zipf-like over 200 values as the probes bench draws them: P(v_k) = log((k + 2) / (k + 1)) / log 200. */
const zipf = (contacts: number, fill: number) => Array.from({ length: 200 }, (_, k) => Math.round((contacts * fill * Math.log((k + 2) / (k + 1))) / Math.log(200)));
const uniform = (contacts: number, fill: number, values: number) => Array.from({ length: values }, () => Math.round((contacts * fill) / values));

const AUDIENCES: Audience[] = [
  // The 15% band, the bench's shapes (the run that measured 93.8%).
  { name: 'skewed, 15%', contacts: 210_000, fraction: 0.15, values: zipf(210_000, 0.95) },
  { name: 'skewed 40% filled, 15%', contacts: 210_000, fraction: 0.15, values: zipf(210_000, 0.4) },
  { name: 'uniform over 20, 15%', contacts: 210_000, fraction: 0.15, values: uniform(210_000, 0.4, 20) },
  { name: 'sparse 2%, 15%', contacts: 210_000, fraction: 0.15, values: [2100, 1260, 840] },
  // Rare values: listed values observed a handful of times.
  { name: 'rare values, 15%', contacts: 210_000, fraction: 0.15, values: [150, 120, 90, 70, 50, 40, 30, 25, 20, 15] },
  { name: 'rare values, 20%', contacts: 60_000, fraction: 0.2, values: [100, 60, 40, 30, 20, 12, 8] },
  { name: 'rare values, 75%', contacts: 12_000, fraction: 0.75, values: [40, 20, 10, 6, 3] },
];

interface Outcome {
  covered: number;
  listed: number;
  /** Largest countError over the textbook half-width z·N·sqrt(p̂(1−p̂)/n) (no finite-population correction). */
  widest: number;
}

function simulate(a: Audience, draws: number, random: () => number): Outcome {
  const filled = a.values.reduce((s, v) => s + v, 0);
  const outcome: Outcome = { covered: 0, listed: 0, widest: 0 };
  for (let d = 0; d < draws; d++) {
    const observed = a.values.map((truth, value) => ({ value, truth, seen: binomial(random, truth, a.fraction) }));
    const scanned = observed.reduce((s, o) => s + o.seen, 0) + binomial(random, a.contacts - filled, a.fraction);
    const top = observed
      .filter((o) => o.seen > 0)
      .sort((x, y) => y.seen - x.seen || x.value - y.value)
      .slice(0, 10);
    for (const o of top) {
      const e = estimateShare(o.seen, scanned, a.contacts, true);
      outcome.listed++;
      if (Math.abs(e.count - o.truth) <= e.countError) outcome.covered++;
      const p = o.seen / scanned;
      outcome.widest = Math.max(outcome.widest, e.countError / (Z95 * a.contacts * Math.sqrt((p * (1 - p)) / scanned)));
    }
  }
  return outcome;
}

describe('countError coverage over many sampled audiences (ADR 0221)', () => {
  const random = seeded(20261124);
  const outcomes = AUDIENCES.map((a) => ({ a, ...simulate(a, 300, random) }));

  it.each(AUDIENCES.map((a) => [a.name]))('covers the true count of at least 95%% of listed values: %s', (name) => {
    const o = outcomes.find((x) => x.a.name === name)!;
    expect(o.covered / o.listed).toBeGreaterThanOrEqual(0.95);
  });

  it('stays within 3× the textbook half-width', () => {
    for (const o of outcomes) expect(o.widest).toBeLessThanOrEqual(3);
  });
});
