import { meanFloor } from './sms-floor';

describe('meanFloor (--floor-after, ADR 0320)', () => {
  it('averages the rates and each process\'s CPU, adds the losses and keeps every latency', () => {
    const before = { enqueued: 700, latencies: [1, 2], delivered: 660, cpu: { floor: 1000, postgres: 500 }, lost: 0 };
    const after = { enqueued: 900, latencies: [3], delivered: 860, cpu: { floor: 800, postgres: 400 }, lost: 1 };
    expect(meanFloor(before, after)).toEqual({ enqueued: 800, latencies: [1, 2, 3], delivered: 760, cpu: { floor: 900, postgres: 450 }, lost: 1 });
    expect(meanFloor({ ...before, drained: 100 }, { ...after, drained: 300 }).drained).toBe(200);
  });
});
