import { defaultGeneralConfig } from '@meld/contracts';
import fc from 'fast-check';
import { completeGeneralConfig, deepMerge } from './project-config';

describe('configuration deep merge', () => {
  it('merges objects key by key; arrays, null and scalars replace; undefined changes nothing', () => {
    const base = { a: { x: 1, y: [1, 2], z: 'keep' }, b: 2 };
    expect(deepMerge(base, { a: { x: 5, y: [9] }, b: undefined })).toEqual({ a: { x: 5, y: [9], z: 'keep' }, b: 2 });
    expect(deepMerge(base, { a: { y: null } })).toEqual({ a: { x: 1, y: null, z: 'keep' }, b: 2 });
    expect(base).toEqual({ a: { x: 1, y: [1, 2], z: 'keep' }, b: 2 });
  });

  it('ignores prototype keys', () => {
    const merged = deepMerge({ a: {} }, JSON.parse('{"__proto__": {"polluted": true}, "a": {"__proto__": {"polluted": true}}}'));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(merged.a)).toBe(Object.prototype);
  });

  it('an empty patch is the identity, and merging a patch twice is merging it once', () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    fc.assert(
      fc.property(fc.dictionary(fc.string().filter((k) => k !== '__proto__'), json), fc.dictionary(fc.string().filter((k) => k !== '__proto__'), json), (base, patch) => {
        expect(deepMerge(base, {})).toEqual(base);
        expect(deepMerge(deepMerge(base, patch), patch)).toEqual(deepMerge(base, patch));
      }),
    );
  });

  it('completes a stored config that lacks blocks or fields with the defaults', () => {
    const stored = { channelSms: { autoCreateContactsOnOutbounds: true } };
    const complete = completeGeneralConfig(stored);
    expect(complete.channelSms).toEqual({ ...defaultGeneralConfig().channelSms, autoCreateContactsOnOutbounds: true });
    expect(complete.channelWhatsapp).toEqual(defaultGeneralConfig().channelWhatsapp);
  });
});
