import { meanFloor } from './sms-floor';

describe('meanFloor (--floor-after, ADR 0320)', () => {
  it('averages the rates and each process\'s CPU, adds the losses and the reports received, and keeps every latency', () => {
    const before = { enqueued: 700, latencies: [1, 2], delivered: 660, cpu: { floor: 1000, postgres: 500 }, lost: 0, reports: { sent: 6000, delivered: 6000 } };
    const after = { enqueued: 900, latencies: [3], delivered: 860, cpu: { floor: 800, postgres: 400 }, lost: 1, reports: { sent: 6000, delivered: 5999 } };
    expect(meanFloor(before, after)).toEqual({ enqueued: 800, latencies: [1, 2, 3], delivered: 760, cpu: { floor: 900, postgres: 450 }, lost: 1, reports: { sent: 12000, delivered: 11999 } });
    expect(meanFloor({ ...before, drained: 100 }, { ...after, drained: 300 }).drained).toBe(200);
  });
});
