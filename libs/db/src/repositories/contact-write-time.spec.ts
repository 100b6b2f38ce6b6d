import { contactWriteTime } from './contact-write-time';

describe('contactWriteTime (ADR 0349)', () => {
  const clock = Date.parse('2026-11-29T10:00:00.000Z');

  it('is Postgres\' clock, to the millisecond, when the row holds nothing later', () => {
    expect(contactWriteTime(clock + 0.9, { attribute_at: { a: '2026-11-29T09:59:59.999Z' }, deleted_at: null })).toBe('2026-11-29T10:00:00.000Z');
    expect(contactWriteTime(clock, { attribute_at: {}, deleted_at: null })).toBe('2026-11-29T10:00:00.000Z');
  });

  it('follows the latest time the row holds by 1 ms when the clock is not past it (a clock stepped back, a fast replica\'s stamp)', () => {
    expect(contactWriteTime(clock, { attribute_at: { a: '2026-11-29T10:00:00.000Z', b: '2026-11-29T11:00:00.000Z' }, deleted_at: null })).toBe('2026-11-29T11:00:00.001Z');
    expect(contactWriteTime(clock, { attribute_at: {}, deleted_at: new Date('2026-11-29T10:00:05.000Z') })).toBe('2026-11-29T10:00:05.001Z');
  });

  it('ignores what is not a time', () => {
    expect(contactWriteTime(clock, { attribute_at: { a: 'soon', b: 42 }, deleted_at: null })).toBe('2026-11-29T10:00:00.000Z');
    expect(contactWriteTime(clock, { attribute_at: null, deleted_at: null })).toBe('2026-11-29T10:00:00.000Z');
  });
});
