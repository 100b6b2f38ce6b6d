import { smsParts } from '../sms/text/sms-parts';
import { linkOrigin, newCode, renderTemplate } from './text-template';

const bases = { short: 'https://go.shop.test', unsubscribe: 'http://127.0.0.1:8080' };
let n = 0;
const codes = (kind: string) => `${kind === 'short' ? 'S' : 'U'}${++n}`;

describe('renderTemplate: {{short:URL}} and {{unsubscribe}} (ADR 0182)', () => {
  beforeEach(() => (n = 0));

  it('gives each short placeholder its own link and every {{unsubscribe}} one opt-out link', () => {
    const out = renderTemplate('See {{short:https://shop.test/o/1?a=b}} or {{ short: http://x.test }}. {{unsubscribe}} {{unsubscribe}}', bases, codes);
    expect(out.text).toBe('See https://go.shop.test/l/S1 or https://go.shop.test/l/S2. http://127.0.0.1:8080/u/U3 http://127.0.0.1:8080/u/U3');
    expect(out.links).toEqual([
      { code: 'S1', kind: 'short', url: 'https://shop.test/o/1?a=b' },
      { code: 'S2', kind: 'short', url: 'http://x.test/' },
      { code: 'U3', kind: 'unsubscribe', url: null },
    ]);
  });

  it('leaves other braces alone and a text without placeholders unchanged', () => {
    expect(renderTemplate('Hi {{name}} {short:x}', bases, codes)).toEqual({ text: 'Hi {{name}} {short:x}', links: [] });
  });

  it.each(['ftp://x.test/f', 'not a url', 'javascript:alert(1)', '/relative'])('refuses %s with a 400 naming text', (url) => {
    expect(() => renderTemplate(`{{short:${url}}}`, bases, codes)).toThrow(expect.objectContaining({ status: 400, response: expect.objectContaining({ details: { fields: [{ path: 'text', message: expect.any(String) }] } }) }));
  });

  it('parts are counted after substitution: a long URL shortened fits one part', () => {
    const text = `${'a'.repeat(120)} {{short:https://shop.test/orders/4821/tracking?utm_source=sms}}`;
    expect(smsParts(text).messagesCount).toBe(2);
    // 120 + 1 + 31 (https://go.shop.test/l/ + 8) = 152 septets.
    expect(smsParts(renderTemplate(text, bases).text)).toEqual({ encoding: 'GSM-7', messagesCount: 1 });
  });

  it('codes: 8 base62 characters for short links, 22 for the unsubscribe link', () => {
    expect(newCode('short')).toMatch(/^[0-9A-Za-z]{8}$/);
    expect(newCode('unsubscribe')).toMatch(/^[0-9A-Za-z]{22}$/);
  });

  it('a tracking domain without a scheme is https; none falls back to the API origin', () => {
    expect(linkOrigin('go.shop.test', 'http://api')).toBe('https://go.shop.test');
    expect(linkOrigin('http://go.shop.test/', 'http://api')).toBe('http://go.shop.test');
    expect(linkOrigin(null, 'http://api')).toBe('http://api');
  });
});
