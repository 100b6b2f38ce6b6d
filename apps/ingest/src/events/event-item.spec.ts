import { insideAutomationWindow, parseEvent, type EventTypeRule } from './event-item';

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
