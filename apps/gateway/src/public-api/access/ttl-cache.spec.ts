import { TtlCache } from './ttl-cache';

describe('TtlCache', () => {
  it('expires entries after the TTL and evicts the least recently used past the size', () => {
    let now = 0;
    const cache = new TtlCache<string, number>(2, 100, () => now);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1); // a is now the most recent
    cache.set('c', 3);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    now = 100;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(1);
  });

  it('deletes by value (a token by id when the key is its hash)', () => {
    const cache = new TtlCache<string, { id: string }>(10, 1000);
    cache.set('h1', { id: 't1' });
    cache.set('h2', { id: 't2' });
    expect(cache.deleteWhere((v) => v.id === 't1')).toBe(1);
    expect(cache.get('h1')).toBeUndefined();
    expect(cache.get('h2')).toEqual({ id: 't2' });
  });
});
