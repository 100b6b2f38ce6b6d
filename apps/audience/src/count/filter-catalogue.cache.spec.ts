import type { FilterCatalogueRows } from '@meld/db';
import type { FilterCatalogueRepository } from './filter-catalogue.repository';
import { CATALOGUE_TTL_MS, FilterCatalogueCache } from './filter-catalogue.cache';

describe('FilterCatalogueCache', () => {
  const setup = () => {
    let reads = 0;
    let type: 'string' | 'number' = 'string';
    const repository = {
      catalogue: async (): Promise<FilterCatalogueRows> => {
        reads++;
        return { attributes: [{ uid: 'tier', type, multivalue: false, slot: 1 }], eventTypes: [] };
      },
    } as unknown as FilterCatalogueRepository;
    return { cache: new FilterCatalogueCache(repository), reads: () => reads, retype: (t: typeof type) => (type = t) };
  };

  it('reads a project once while the entry is younger than the TTL, again after it (a changed type shows)', async () => {
    const { cache, reads, retype } = setup();
    await cache.cached('p1', 0);
    retype('number');
    expect((await cache.cached('p1', CATALOGUE_TTL_MS - 1)).attributes[0].type).toBe('string');
    expect(reads()).toBe(1);
    expect((await cache.cached('p1', CATALOGUE_TTL_MS)).attributes[0].type).toBe('number');
    expect(reads()).toBe(2);
  });

  it('shares one read between concurrent calls; a reload replaces the entry; projects are apart', async () => {
    const { cache, reads } = setup();
    await Promise.all([cache.cached('p1', 0), cache.cached('p1', 0)]);
    expect(reads()).toBe(1);
    await cache.reload('p1', 5);
    await cache.cached('p1', 6);
    await cache.cached('p2', 6);
    expect(reads()).toBe(3);
  });

  it('does not keep a failed read', async () => {
    let fail = true;
    const repository = { catalogue: async () => (fail ? Promise.reject(new Error('down')) : { attributes: [], eventTypes: [] }) } as unknown as FilterCatalogueRepository;
    const cache = new FilterCatalogueCache(repository);
    await expect(cache.cached('p1', 0)).rejects.toThrow('down');
    fail = false;
    await expect(cache.cached('p1', 1)).resolves.toEqual({ attributes: [], eventTypes: [] });
  });
});
