import { loadPublicUrl } from './public-url';

describe('loadPublicUrl', () => {
  it('takes MELD_PUBLIC_URL without its trailing slashes', () => {
    expect(loadPublicUrl({ MELD_PUBLIC_URL: 'https://api.example.com//' })).toBe('https://api.example.com');
  });

  it("falls back to the local gateway's address on the local stack only", () => {
    expect(loadPublicUrl({ MELD_ALLOW_DEV_SECRETS: '1' })).toBe('http://127.0.0.1:8080');
    for (const env of [{}, { MELD_ALLOW_DEV_SECRETS: '1', NODE_ENV: 'production' }]) {
      expect(() => loadPublicUrl(env)).toThrow(/MELD_PUBLIC_URL: required outside the local stack/);
    }
  });

  it('refuses what is not an http(s) URL, naming the variable', () => {
    expect(() => loadPublicUrl({ MELD_PUBLIC_URL: 'api.example.com' })).toThrow(/MELD_PUBLIC_URL/);
  });
});
