import { binomial, seeded } from '../../test/sampling-simulation';
import { Z95, estimateTotal } from './estimators';

/**
 * How often the countError of an event parameter value covers its true events (issue 15: at least
 * 95%, within 3× the textbook half-width), over many samples of populations whose truth is known
 * and where a few contacts have many events (ADR 0247). The probe samples contacts, each in or out
 * independently with the band's fraction, and lists the ten values with the most sampled events;
 * each listed value's Σy and Σy² over the sampled contacts (y: the contact's events with the value)
 * are what the volumes SQL returns (its sums are checked against known data on the real stack in
 * apps/probes/test/volumes-sampling.integration-spec.ts).
 */

/** One contact holding values: [value, its events with that value]. */
type Holder = ReadonlyArray<readonly [value: string, events: number]>;

interface Population {
  name: string;
  /** Contacts of the population (N), holders or not. */
  contacts: number;
  fraction: number;
  holders: Holder[];
  draws: number;
}

const random = seeded(20261125);
const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));

/** The probes bench's purchases: events on contact ⌊u²·N⌋ (a few contacts hold hundreds), product Zipf-like over 500 values. */
function benchPurchases(contacts: number, events: number): Holder[] {
  const byContact = new Map<number, Map<string, number>>();
  for (let e = 0; e < events; e++) {
    const u = random();
    const contact = Math.floor(u * u * contacts);
    const product = `P-${Math.floor(500 ** random()) - 1}`;
    const held = byContact.get(contact) ?? new Map<string, number>();
    held.set(product, (held.get(product) ?? 0) + 1);
    byContact.set(contact, held);
  }
  return [...byContact.values()].map((held) => [...held]);
}

/** `heavy` contacts with `perHeavy` events of one value beside `light` contacts with one event of another. */
const heavyAndLight = (heavy: number, perHeavy: number, light: number): Holder[] => [
  ...Array.from({ length: heavy }, (): Holder => [['heavy', perHeavy]]),
  ...Array.from({ length: light }, (): Holder => [['light', 1]]),
];

/** Per value: `heavy` contacts with 30-79 events and `light` ones with 1-3. */
const fewHeavyPerValue = (values: number, heavy: number, light: number): Holder[] =>
  Array.from({ length: values }, (_, v) => [
    ...Array.from({ length: heavy }, (): Holder => [[`v${v}`, between(30, 79)]]),
    ...Array.from({ length: light }, (): Holder => [[`v${v}`, between(1, 3)]]),
  ]).flat();

const POPULATIONS: Population[] = [
  { name: "the bench's purchases (100,000 events), 15%", contacts: 210_000, fraction: 0.15, holders: benchPurchases(210_000, 100_000), draws: 300 },
  { name: '300 contacts × 40 events beside 3,000 × 1, 15%', contacts: 210_000, fraction: 0.15, holders: heavyAndLight(300, 40, 3_000), draws: 1_000 },
  { name: '300 contacts × 40 events beside 3,000 × 1, 20%', contacts: 60_000, fraction: 0.2, holders: heavyAndLight(300, 40, 3_000), draws: 1_000 },
  { name: '20 heavy and 300 light contacts per value, 50%', contacts: 30_000, fraction: 0.5, holders: fewHeavyPerValue(10, 20, 300), draws: 300 },
];

interface Outcome {
  covered: number;
  listed: number;
  /** Largest countError over the textbook half-width z·N·sqrt((1 − n/N)·s²/n) of a total from a sample of contacts. */
  widest: number;
}

function simulate(p: Population): Outcome {
  const truth = new Map<string, number>();
  for (const h of p.holders) for (const [value, events] of h) truth.set(value, (truth.get(value) ?? 0) + events);
  const outcome: Outcome = { covered: 0, listed: 0, widest: 0 };
  for (let d = 0; d < p.draws; d++) {
    const sums = new Map<string, { sum: number; squares: number }>();
    let sampledHolders = 0;
    for (const h of p.holders) {
      if (random() >= p.fraction) continue;
      sampledHolders++;
      for (const [value, events] of h) {
        const s = sums.get(value) ?? { sum: 0, squares: 0 };
        s.sum += events;
        s.squares += events * events;
        sums.set(value, s);
      }
    }
    const scanned = sampledHolders + binomial(random, p.contacts - p.holders.length, p.fraction);
    const listed = [...sums].sort(([a, x], [b, y]) => y.sum - x.sum || (a < b ? -1 : 1)).slice(0, 10);
    for (const [value, { sum, squares }] of listed) {
      const e = estimateTotal(sum, squares, scanned, p.contacts, true);
      outcome.listed++;
      if (Math.abs(e.count - truth.get(value)!) <= e.countError) outcome.covered++;
      const mean = sum / scanned;
      const variance = (squares - scanned * mean * mean) / (scanned - 1);
      const textbook = Z95 * p.contacts * Math.sqrt(((1 - scanned / p.contacts) * variance) / scanned);
      if (textbook > 0) outcome.widest = Math.max(outcome.widest, e.countError / textbook);
    }
  }
  return outcome;
}

describe('event parameter countError over many samples with heavy contacts (ADR 0247)', () => {
  const outcomes = new Map(POPULATIONS.map((p) => [p.name, simulate(p)]));

  it.each(POPULATIONS.map((p) => [p.name]))('covers the true events of at least 95%% of listed values: %s', (name) => {
    const o = outcomes.get(name)!;
    expect(o.covered / o.listed).toBeGreaterThanOrEqual(0.95);
  });

  it('stays within 3× the textbook half-width', () => {
    for (const o of outcomes.values()) expect(o.widest).toBeLessThanOrEqual(3);
  });
});
