import { PROTOTYPE_NAMES } from '@meld/testing';
import { insideAutomationWindow, parseEvent, type EventTypeRule } from './event-item';
import { MAX_PARAMETER_DEPTH, MAX_PARAMETERS_BYTES } from './event-parameters';
import { EVENT_USER_DATA_MAX_BYTES } from './event-user-data';

const types = new Map<string, EventTypeRule>([
  ['purchase', { id: 't1', uid: 'purchase', automation: false, parameters: [{ parameter: 'sku', dataType: 'string', required: true, multiValue: 1, maxLength: 4 }, { parameter: 'sizes', dataType: 'number', required: false, multiValue: 2, maxLength: null }] }],
]);
const received = '2026-01-01T12:00:00.000Z';

describe('event items', () => {
  it('defaults the date to reception and normalises a given one to UTC', () => {
    const a = parseEvent({ _user_id: 'u', _event_id: 'e', _event_type: 'purchase', _event_parameters: { sku: 'abc' } }, types, received);
    expect(a.ok && a.event.eventDate).toBe(received);
    const b = parseEvent({ _user_id: 'u', _event_id: 'e', _event_type: 'purchase', _event_parameters: { sku: 'abc' }, _event_date: '2026-01-01T14:00:00+02:00' }, types, received);
    expect(b.ok && b.event.eventDate).toBe(received);
  });

  it('checks declared parameters: required, type, list size, length', () => {
    const r = parseEvent({ _user_id: 'u', _event_id: 'e', _event_type: 'purchase', _event_parameters: { sizes: [1, 2, 3] } }, types, received);
    expect(r.ok ? null : r.errors).toEqual({ '_event_parameters.sku': ['is required'], '_event_parameters.sizes': ['must have at most 2 values'] });
    const long = parseEvent({ _user_id: 'u', _event_id: 'e', _event_type: 'purchase', _event_parameters: { sku: 'abcde', other: { free: true } } }, types, received);
    expect(long.ok ? null : long.errors).toEqual({ '_event_parameters.sku': ['must be at most 4 characters'] });
  });

  it('the automation window is ±1 h inclusive', () => {
    const at = (ms: number) => new Date(Date.parse(received) + ms).toISOString();
    expect(insideAutomationWindow(at(3600_000), received)).toBe(true);
    expect(insideAutomationWindow(at(-3600_000), received)).toBe(true);
    expect(insideAutomationWindow(at(3600_001), received)).toBe(false);
    expect(insideAutomationWindow(at(-3600_001), received)).toBe(false);
  });
});

describe('hostile event items (ADR 0113)', () => {
  const item = (over: Record<string, unknown>) => ({ _user_id: 'u', _event_id: 'e', _event_type: 'purchase', _event_parameters: { sku: 'abc' }, ...over });
  const errorsOf = (over: Record<string, unknown>) => {
    const r = parseEvent(item(over), types, received);
    return r.ok ? null : { ...r.errors };
  };
  const nested = (depth: number): unknown => (depth === 0 ? 1 : { a: nested(depth - 1) });

  it('bounds the nesting of every parameter, declared or not', () => {
    expect(errorsOf({ _event_parameters: { sku: 'abc', deep: nested(MAX_PARAMETER_DEPTH) } })).toBeNull();
    expect(errorsOf({ _event_parameters: { sku: 'abc', deep: nested(MAX_PARAMETER_DEPTH + 1) } })).toEqual({ '_event_parameters.deep': [`must not nest more than ${MAX_PARAMETER_DEPTH} levels of lists and objects`] });
    expect(errorsOf({ _event_parameters: { sku: 'abc', list: [[[[[[1]]]]]] } })).toEqual({ '_event_parameters.list': [`must not nest more than ${MAX_PARAMETER_DEPTH} levels of lists and objects`] });
  });

  it('refuses U+0000 in parameter names and values, at any depth', () => {
    expect(errorsOf({ _event_parameters: { sku: 'abc', note: 'a\u0000b' } })).toEqual({ '_event_parameters.note': ['must not contain the NUL character (U+0000)'] });
    expect(errorsOf({ _event_parameters: { sku: 'abc', meta: { list: ['ok', 'x\u0000'] } } })).toEqual({ '_event_parameters.meta': ['must not contain the NUL character (U+0000)'] });
    expect(errorsOf({ _event_parameters: { sku: 'abc', meta: { 'k\u0000': 1 } } })).toEqual({ '_event_parameters.meta': ['names inside must not contain the NUL character (U+0000)'] });
    expect(errorsOf({ _event_parameters: { sku: 'abc', 'n\u0000': 1 } })).toEqual({ _event_parameters: ['parameter names must not contain the NUL character (U+0000)'] });
  });

  it('bounds the size of the parameters as JSON', () => {
    expect(errorsOf({ _event_parameters: { sku: 'abc', blob: 'x'.repeat(MAX_PARAMETERS_BYTES - 100) } })).toBeNull();
    const big = errorsOf({ _event_parameters: { sku: 'abc', blob: 'x'.repeat(MAX_PARAMETERS_BYTES) } });
    expect(big?._event_parameters?.[0]).toMatch(new RegExp(`^must be at most ${MAX_PARAMETERS_BYTES} bytes as JSON \\(is \\d+\\)$`));
  });

  it('bounds _user_data at 256 KiB as JSON, cleared names included (the message carries them all, ADR 0346)', () => {
    expect(EVENT_USER_DATA_MAX_BYTES).toBe(256 * 1024);
    // {"note":"…"} is 11 bytes besides the string; multi-byte characters count as their UTF-8 bytes.
    const sized = (bytes: number) => ({ note: 'é'.repeat(Math.floor((bytes - 11) / 2)) + 'x'.repeat((bytes - 11) % 2) });
    expect(Buffer.byteLength(JSON.stringify(sized(EVENT_USER_DATA_MAX_BYTES)))).toBe(EVENT_USER_DATA_MAX_BYTES);
    expect(errorsOf({ _user_data: sized(EVENT_USER_DATA_MAX_BYTES) })).toBeNull();
    const over = errorsOf({ _user_data: sized(EVENT_USER_DATA_MAX_BYTES + 1) });
    expect(over).toEqual({ _user_data: [expect.stringMatching(new RegExp(`^must be at most ${EVENT_USER_DATA_MAX_BYTES} bytes \\(256 KiB\\) as JSON \\(is ${EVENT_USER_DATA_MAX_BYTES + 1}\\)`))] });
    const nulls = Object.fromEntries(Array.from({ length: 4000 }, (_, i) => [`cleared-${i}`.padEnd(64, 'x'), null]));
    expect(Object.keys(errorsOf({ _user_data: nulls }) ?? {})).toEqual(['_user_data']);
  });

  it('takes _event_date only within what ClickHouse DateTime holds (1970 to 2105)', () => {
    expect(errorsOf({ _event_date: '1970-01-01T00:00:00Z' })).toBeNull();
    expect(errorsOf({ _event_date: '2105-12-31T23:59:59Z' })).toBeNull();
    for (const date of ['1969-12-31T23:59:59Z', '2106-01-01T00:00:00Z', '2200-01-01T00:00:00Z', '1970-01-01T00:30:00+01:00'])
      expect(errorsOf({ _event_date: date })).toEqual({ _event_date: ['must be between 1970-01-01T00:00:00Z and 2105-12-31T23:59:59Z'] });
  });

  it.each(PROTOTYPE_NAMES)('takes %s as a parameter name and names it as an unknown field', (name) => {
    const params = JSON.parse(`{"sku":"abc","${name}":{"${name}":1}}`) as Record<string, unknown>;
    const ok = parseEvent(item({ _event_parameters: params }), types, received);
    expect(ok.ok && Object.keys(ok.event.parameters)).toEqual(['sku', name]);
    const bad = JSON.parse(`{"_user_id":"u","_event_id":"e","_event_type":"purchase","_event_parameters":{"sku":"abc"},"${name}":1}`) as Record<string, unknown>;
    const r = parseEvent(bad, types, received);
    expect(r.ok ? null : { ...r.errors }).toEqual({ [name]: [`unknown event field ${name}`] });
    const unknownType = parseEvent(item({ _event_type: name }), types, received);
    expect(unknownType.ok ? null : { ...unknownType.errors }).toEqual({ _event_type: [`unknown event type ${name}`] });
  });
});
