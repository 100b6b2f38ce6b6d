import { ingestLingerMs } from './ingest-producer';

describe('MELD_INGEST_LINGER_MS', () => {
  it('defaults to 4 ms, takes 0 to turn the linger off, and refuses what is not a whole number of ms', () => {
    expect(ingestLingerMs({})).toBe(4);
    expect(ingestLingerMs({ MELD_INGEST_LINGER_MS: '0' })).toBe(0);
    for (const bad of ['-1', 'soon', '2.5']) expect(() => ingestLingerMs({ MELD_INGEST_LINGER_MS: bad })).toThrow(/MELD_INGEST_LINGER_MS/);
  });
});
