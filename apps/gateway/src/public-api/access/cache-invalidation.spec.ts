import { tokenIdOf } from './cache-invalidation';

describe('revocation message', () => {
  it('is the bare token id, or JSON carrying it', () => {
    expect(tokenIdOf(' abc \n')).toBe('abc');
    expect(tokenIdOf('{"id":"abc"}')).toBe('abc');
    expect(tokenIdOf('{"tokenId":"abc"}')).toBe('abc');
  });
});
