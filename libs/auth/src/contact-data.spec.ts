import type { DataMode, Scope } from '@meld/contracts';
import { PROTOTYPE_NAMES } from '@meld/testing';
import fc from 'fast-check';
import { CONTACT_DATA_BLOCKED, contactDataMask, contactDataView } from './contact-data';
import { maskPiiDeep, maskPiiInText } from './pii-masks';

const caller = (dataMode: DataMode, scopes: Scope[]) => ({ kind: 'product' as const, scopes, project: { id: 'p', uid: 'p', dataMode } });
const READ: Scope[] = ['PROJECT_AUDIENCE_READ'];
const BASIC: Scope[] = [...READ, 'PROJECT_AUDIENCE_DATA_BASIC'];

describe('contact-derived data under the data mode (ADR 0121)', () => {
  it('follows the contact serializer: clear only in normal mode at Basic or Full, withheld when blocked', () => {
    expect(contactDataView(caller('normal', BASIC))).toBe('clear');
    expect(contactDataView(caller('normal', READ))).toBe('masked');
    expect(contactDataView(caller('anonymized', BASIC))).toBe('masked');
    expect(contactDataView(caller('blocked', BASIC))).toBe('withheld');
    expect(contactDataView({ kind: 'product', scopes: BASIC, project: null })).toBe('withheld');
    expect(contactDataMask(caller('blocked', BASIC))).toBeNull();
    expect(CONTACT_DATA_BLOCKED).toMatch(/blocked/);
  });

  it('masks emails and phone numbers inside texts, and leaves dates, amounts and ids alone', () => {
    expect(maskPiiInText('write to ada@example.com, or call +33 6 12 34 56 78, 06.12.34.56.78')).toBe('write to a***@e***.com, or call +33******78, 06******78');
    // Two numbers split by a slash are one run, masked as numbers side by side are (below).
    expect(maskPiiInText('call +33 6 12 34 56 78 / 06.12.34.56.78')).toBe('call +33******78');
    // a counterexample fast-check found: a quote in the local part
    expect(maskPiiInText("'@a.aa")).toBe("'***@a***.aa");
    // No-break spaces (U+00A0, U+202F) between the groups, as French text writes them.
    expect(maskPiiInText('tél. 06\u00a012\u00a034\u00a056\u00a078 ou +33\u202f6\u202f12\u202f34\u202f56\u202f78')).toBe('tél. 06******78 ou +33******78');
    for (const kept of ['2026-01-01', '2026-01-01T10:00:00+02:00', 'order 12345678', 'total 1234.50', 'sku-42', '@handle', 'a@b']) expect(maskPiiInText(kept)).toBe(kept);
  });

  it('masks a phone number joined to words by underscores, as by dashes (ids such as order_0612345678_1)', () => {
    expect(maskPiiInText('order_0612345678_1')).toBe('order_06******78_1');
    expect(maskPiiInText('sms_+33612345678_2')).toBe('sms_+33******78_2');
    expect(maskPiiInText('__0612345678__')).toBe('__06******78__');
    // Letters and digits still hold a run inside a word: a hash or a code is no phone.
    for (const kept of ['call0612345678', 'a1b2c30612345678d', 'abc_1700000000x']) expect(maskPiiInText(kept)).toBe(kept);
  });

  it('masks phone numbers written in the digits and separators the phone parser reads: full-width, Arabic-Indic', () => {
    // normalisePhone (libphonenumber) reads each of these as +33612345678 or +819012345678.
    expect(maskPiiInText('tel ０６１２３４５６７８')).toBe('tel ０６******７８');
    expect(maskPiiInText('電話：０９０－１２３４－５６７８')).toBe('電話：０９******７８');
    expect(maskPiiInText('０９０ー１２３４ー５６７８')).toBe('０９******７８');
    expect(maskPiiInText('＋８１　９０　１２３４　５６７８')).toBe('＋８１******７８');
    expect(maskPiiInText('رقم ٠٦١٢٣٤٥٦٧٨')).toBe('رقم ٠٦******٧٨');
    expect(maskPiiInText('۰۶ ۱۲ ۳۴ ۵۶ ۷۸')).toBe('۰۶******۷۸');
    expect(maskPiiInText('06–12–34–56–78')).toBe('06******78');
    // As in ASCII digits: a date, a short number and one long id stay.
    for (const kept of ['２０２６－１１－２９', '注文１２３４５', '１２３４５６７８９０１２３４５６７８９']) expect(maskPiiInText(kept)).toBe(kept);
  });

  it('masks emails and phone numbers percent-encoded in a URL (%40 for @, %2B for +)', () => {
    expect(maskPiiInText('ada%40example.com')).toBe('a***%40e***.com');
    expect(maskPiiInText('to=ADA%2Bshop%40EXAMPLE.COM')).toBe('t***%40E***.COM');
    expect(maskPiiInText('tel=%2B33612345678&x=1')).toBe('tel=%2B33******78&x=1');
    expect(maskPiiInText('tel=%2b33612345678')).toBe('tel=%2b33******78');
    const url = 'https://shop.example/checkout?email=ada.lovelace%40example.com&phone=%2B33612345678';
    const masked = maskPiiInText(url);
    expect(masked).not.toMatch(/lovelace|612345678/);
    // As an unencoded address in a URL is (the local part runs back to the scheme's colon).
    expect(maskPiiInText(url.replace('%40', '@'))).toBe(masked.replace('%40', '@'));
    for (const kept of ['100%40 off', 'a%2B1234']) expect(maskPiiInText(kept)).toBe(kept);
  });

  it('masks a long text without an address in linear time (a host that may hold % backtracked cubically, 47 s for 6,000 characters; a start at every character was quadratic)', () => {
    // Dates too: each phone-like run looked through every date of the text (quadratic).
    for (const run of ['%40', '%40a', '%2B', '%40%2B1', 'a', 'a.', '1', '2024-05-06 12:30 ', '05415024-7345-43e2-8a1f-af2b744a6f80 0']) {
      // 16 KiB, the largest event parameter ingest takes; a single @ at the end, no address.
      const text = `${run.repeat(Math.ceil(16384 / run.length))}@`;
      // The fastest of three runs: a loaded machine can stall one run, never all three (CI).
      const fastest = Math.min(
        ...[0, 1, 2].map(() => {
          const started = performance.now();
          maskPiiInText(text);
          return performance.now() - started;
        }),
      );
      expect([run, fastest < 200]).toEqual([run, true]);
    }
  });

  it('keeps a UUID whole, even one whose first groups are all decimal digits (an event or user id), and still masks a phone beside one', () => {
    // `05415024-7345` read as a dashed 12-digit number: ids built on UUIDs came back masked, one in ~280.
    for (const id of ['05415024-7345-43e2-8a1f-af2b744a6f80', 'ev-signup-old-05415024-7345-43e2-8a1f-af2b744a6f80', '12345678-1234-1234-1234-123456789012']) expect(maskPiiInText(id)).toBe(id);
    expect(maskPiiInText('+33612345678 05415024-7345-43e2-8a1f-af2b744a6f80')).toBe('+33******78 05415024-7345-43e2-8a1f-af2b744a6f80');
    expect(maskPiiInText('order_0612345678_05415024-7345-43e2-8a1f-af2b744a6f80')).not.toContain('0612345678');
    expect(maskPiiInText('05415024-7345-43e2-8a1f-123456789012 0612345678')).toBe('05415024-7345-43e2-8a1f-123456789012 06******78');
    fc.assert(fc.property(fc.uuid(), fc.stringMatching(/^[0-9]{12}$/), (uuid, digits) => {
      const allDecimalStart = `${digits.slice(0, 8)}-${digits.slice(8)}${uuid.slice(13)}`;
      expect(maskPiiInText(`ev-${uuid}`)).toBe(`ev-${uuid}`);
      expect(maskPiiInText(allDecimalStart)).toBe(allDecimalStart);
    }));
  });

  it('masks phone numbers whose groups are split by slashes or brackets, as German numbers are written (0171/1234567)', () => {
    // normalisePhone (libphonenumber) reads each as a valid German number (+491711234567, +493012345678).
    expect(maskPiiInText('Handy 0171/1234567')).toBe('Handy 01******67');
    expect(maskPiiInText('Tel. 030/12345678, +49 171/1234567')).toBe('Tel. 03******78, +49******67');
    expect(maskPiiInText('0171 / 123 45 67')).toBe('01******67');
    expect(maskPiiInText('[030] 12345678')).toBe('[03******78');
    // Dates and short paths hold fewer digits than a phone: they stay.
    for (const kept of ['29/11/2026', '2026/11/29', '/orders/1234/5678', '[2026]']) expect(maskPiiInText(kept)).toBe(kept);
  });

  it('keeps dates and date-times whole (an analyst reads them), and still masks a phone beside one or written with dashes and slashes', () => {
    // A date then a time made one run of 10 digits: `order 2024-05-06 12:30` came back `order 20******12:30`.
    for (const kept of ['order 2024-05-06 12:30', '2024-05-06 12:30:45.123+02:00', '2024-05-06T12:30:00Z', '2024/05/06 12:30', '06/05/2024 12:30', '29.11.2026 08:15:00', 'from 2024-05-06 to 2024-05-07']) {
      expect(maskPiiInText(kept)).toBe(kept);
    }
    expect(maskPiiInText('2024-05-06 12:30 +33612345678')).toBe('2024-05-06 12:30 +33******78');
    expect(maskPiiInText('2024-05-06 0612345678')).toBe('2024-05-06 06******78');
    expect(maskPiiInText('06 12 34 56 78 29/11/2026')).toBe('06******78 29/11/2026');
    for (const [phone, masked] of [['0171/1234567', '01******67'], ['06-12-34-56-78', '06******78'], ['+33 6 12 34 56 78', '+33******78']]) {
      expect(maskPiiInText(`${phone} 2024-05-06 12:30`)).toBe(`${masked} 2024-05-06 12:30`);
    }
    // A date-shaped run that goes on with its own separators could be a number: it is judged as one run (privacy first).
    for (const run of ['2024-05-06-12-34', '1-12-05-2024', '+2024-05-06', '2024-05-0612', '12/05/2024/1234']) expect(maskPiiInText(run)).not.toBe(run);
    const ASCII_PHONES = [/^0[1-9]( [0-9]{2}){4}$/, /^0[1-9](-[0-9]{2}){4}$/, /^0[1-9]{3}\/[0-9]{7}$/, /^\+[1-9][0-9]{8,13}$/, /^\+33 [1-9]( [0-9]{2}){4}$/];
    const date = fc.date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString());
    const written = fc.tuple(date, fc.integer({ min: 0, max: 7 })).map(([iso, form]) => {
      const [y, m, d, hh, mm, ss] = [iso.slice(0, 4), iso.slice(5, 7), iso.slice(8, 10), iso.slice(11, 13), iso.slice(14, 16), iso.slice(17, 19)];
      return [iso, `${y}-${m}-${d}`, `${y}-${m}-${d} ${hh}:${mm}`, `${y}/${m}/${d} ${hh}:${mm}:${ss}`, `${d}/${m}/${y} ${hh}:${mm}`, `${m}/${d}/${y}`, `${d}.${m}.${y} ${hh}:${mm}`, `${y}-${m}-${d}T${hh}:${mm}:${ss}+02:00`][form];
    });
    fc.assert(
      fc.property(written, fc.oneof(...ASCII_PHONES.map((re) => fc.stringMatching(re))), fc.constantFrom(' ', ', ', ' - ', ' / '), (when, phone, separator) => {
        expect(maskPiiInText(`order ${when}`)).toBe(`order ${when}`);
        for (const text of [`${when}${separator}${phone}`, `${phone}${separator}${when}`]) {
          const out = maskPiiInText(text);
          expect(out).toContain(when);
          expect(out).not.toContain(phone.replace(/^\+/, '').slice(2, -2));
        }
      }),
    );
  });

  it('masks numbers written side by side, and keeps one long id of digits alone', () => {
    // Two numbers made one run of 20 digits, more than a phone holds, and were left in clear;
    // a number then a second one cut at 22 characters left the second one's tail in clear.
    expect(maskPiiInText('06 12 34 56 78 07 98 76 54 32')).toBe('06******32');
    expect(maskPiiInText('tel +33 6 12 34 56 78 - 06 98 76 54 32 (home)')).toBe('tel +33******32 (home)');
    expect(maskPiiInText('ids 1234567890123456789')).toBe('ids 1234567890123456789');
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^0[1-9]( [0-9]{2}){4}$/), { minLength: 2, maxLength: 6 }), fc.constantFrom(' ', ' - ', ' / ', ', ', '  '), (phones, separator) => {
        const out = maskPiiInText(`call ${phones.join(separator)} today`);
        for (const phone of phones) expect(out).not.toContain(phone.slice(3));
      }),
    );
  });

  it('never lets an email or a phone through, wherever it sits in a value', () => {
    fc.assert(
      fc.property(fc.emailAddress(), fc.stringMatching(/^\+[1-9][0-9]{8,13}$/), fc.constantFrom(...PROTOTYPE_NAMES, 'note'), (email, phone, key) => {
        const out = JSON.stringify(maskPiiDeep({ [key]: `to ${email} at ${phone}`, list: [email, { phone }] }));
        expect(out).not.toContain(email);
        expect(out).not.toContain(phone);
      }),
    );
  });

  it('masks emails and phone numbers used as keys, keeping every entry when two mask alike', () => {
    const masked = maskPiiDeep(JSON.parse('{"ada@example.com":"sent","amy@example.com":"failed","a***@e***.com":"literal","+33612345678":{"n":1},"note":"x"}'));
    expect(masked).toEqual({ 'a***@e***.com': 'sent', 'a***@e***.com (2)': 'failed', 'a***@e***.com (3)': 'literal', '+33******78': { n: 1 }, note: 'x' });
    fc.assert(
      fc.property(fc.emailAddress(), fc.emailAddress(), fc.stringMatching(/^\+[1-9][0-9]{8,13}$/), (a, b, phone) => {
        const value = { [a]: 1, nested: { [b]: [{ [phone]: 2 }] } };
        const out = JSON.stringify(maskPiiDeep(value));
        for (const pii of [a, b, phone]) expect(out).not.toContain(pii);
        // Every entry is still there.
        expect(out.match(/:/g)?.length).toBe(JSON.stringify(value).match(/:/g)?.length);
      }),
    );
  });

  it('keeps the keys, prototype member names included, as plain data', () => {
    const value = JSON.parse(`{${PROTOTYPE_NAMES.map((n) => `"${n}":"x@y.io"`).join(',')}}`) as Record<string, unknown>;
    const masked = maskPiiDeep(value) as Record<string, unknown>;
    expect(Object.keys(masked)).toEqual([...PROTOTYPE_NAMES]);
    expect(Object.values(masked).every((v) => v === 'x***@y***.io')).toBe(true);
  });
});
