import fc from 'fast-check';
import { UID_PATTERN, slugify, uidCandidates } from './slug';

describe('readable uids', () => {
  it('folds names into lowercase dashed slugs', () => {
    expect(slugify('Café Müller Shop (EU)', 'project')).toBe('cafe-muller-shop-eu');
    expect(slugify('  --  ', 'project')).toBe('project');
    expect(slugify('日本語', 'source')).toBe('source');
  });

  it('always yields valid uids: the slug first, then suffixed variants', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (name) => {
        const candidates = [...uidCandidates(name, 'project')];
        expect(candidates[0]).toBe(slugify(name, 'project'));
        for (const c of candidates) expect(c).toMatch(UID_PATTERN);
      }),
    );
  });
});
