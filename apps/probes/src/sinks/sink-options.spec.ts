import { sinkOptions } from './sink-options';

describe('MELD_PROBES_EVENTS_LINGER_MS', () => {
  it('defaults to 1000 ms, takes 0 to insert without waiting, and refuses what is not a whole number of ms', () => {
    expect(sinkOptions({}).eventsLingerMs).toBe(1000);
    expect(sinkOptions({ MELD_PROBES_EVENTS_LINGER_MS: '0' }).eventsLingerMs).toBe(0);
    for (const bad of ['-1', 'soon', '2.5', '60001']) expect(() => sinkOptions({ MELD_PROBES_EVENTS_LINGER_MS: bad })).toThrow(/MELD_PROBES_EVENTS_LINGER_MS/);
  });
});

describe('MELD_KAFKA_SESSION_TIMEOUT_MS', () => {
  it('sets how long a killed sink holds its partitions, as in identity-merge; kafkajs decides without it', () => {
    expect(sinkOptions({ MELD_KAFKA_SESSION_TIMEOUT_MS: '6000' }).sessionTimeoutMs).toBe(6000);
    expect(sinkOptions({}).sessionTimeoutMs).toBeUndefined();
  });
});
