const { paceStep, pacer, settle } = require('./pacing');
const { shortfall } = require('./shortfall');

// The seed's backpressure (ADR 0241): never more than --max-ahead written beyond what the
// product API says arrived, and no success without everything arrived.
describe('meld seed: pacing', () => {
  const at = (over: object) => paceStep({ end: 1000, confirmed: 0, maxAhead: 1000, readAgeMs: 0, readEveryMs: 1000, ...over });

  it('sends while within --max-ahead of the last count, the limit included', () => {
    expect(at({})).toBe('send');
    expect(at({ end: 25_000, confirmed: 24_000 })).toBe('send');
  });

  it('past the limit, reads the count again when the last read is old enough, else waits', () => {
    expect(at({ end: 1001 })).toBe('wait');
    expect(at({ end: 1001, readAgeMs: 999 })).toBe('wait');
    expect(at({ end: 1001, readAgeMs: 1000 })).toBe('read');
    expect(at({ end: 1001, readAgeMs: Infinity })).toBe('read');
  });

  it('lets a send through once the count catches up, reading once for all workers', async () => {
    const counts = [0, 400, 2000];
    let reads = 0;
    const pace = pacer({ read: async () => counts[Math.min(reads++, counts.length - 1)], maxAhead: 1000, readEveryMs: 0, stallMs: 60_000, stalled: () => new Error('stalled'), sleepMs: 1 });
    const waits: number[] = [];
    await Promise.all([pace.before(2500, (a: number) => waits.push(a)), pace.before(2500)]);
    expect(pace.confirmed).toBe(2000);
    expect(reads).toBe(3);
    expect(waits).toEqual([2500, 2500, 2100, 0]);
  });

  it('a wait whose count does not move for --stall-seconds fails, naming what is missing', async () => {
    let clock = 0;
    const pace = pacer({ read: async () => 300, maxAhead: 100, readEveryMs: 0, stallMs: 5000, stalled: (ahead: number, reached: number) => new Error(shortfall('people', reached, reached + ahead, 5)), sleepMs: 1, now: () => (clock += 1000) });
    await expect(pace.before(1000)).rejects.toThrow(/only 300 of 1,000 people are merged into the audience \(700 missing\)/);
  });

  it('a read that fails stops the wait with its reason, not a stall', async () => {
    const pace = pacer({ read: async () => Promise.reject(new Error('count answered 403')), maxAhead: 100, readEveryMs: 0, stallMs: 60_000, stalled: () => new Error('stalled'), sleepMs: 1 });
    await expect(pace.before(1000)).rejects.toThrow('count answered 403');
  });

  it('the final wait ends at the expected count, or after a stall with what it reached', async () => {
    const seen: number[] = [];
    let n = 0;
    expect(await settle({ read: async () => (n += 40), expected: 100, stallMs: 1000, everyMs: 1, onRead: (x: number) => seen.push(x) })).toBe(120);
    expect(seen).toEqual([40, 80, 120]);
    let clock = 0;
    expect(await settle({ read: async () => 60, expected: 100, stallMs: 3000, everyMs: 1, now: () => (clock += 1000) })).toBe(60);
    expect(await settle({ read: async () => undefined, expected: 100, stallMs: 3000, everyMs: 1, now: () => (clock += 1000) })).toBe(0);
  });

  it('the shortfall says what is missing and why the development broker loses it', () => {
    const text = shortfall('events', 1_947_000, 2_000_000, 120);
    expect(text).toContain('only 1,947,000 of 2,000,000 events are stored in the event store (53,000 missing)');
    expect(text).toContain('meld.events.v1 keeps only 5 MB');
    expect(text).not.toMatch(/[{}]/); // printed beside --json output, which is found by its first brace
  });
});
