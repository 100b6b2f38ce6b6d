import { canonicalTimeZone, isoInZone, isoWithOffset } from './time';

describe('timestamps', () => {
  it('writes UTC with a numeric offset', () => {
    expect(isoWithOffset(new Date('2026-03-29T00:59:59Z'))).toBe('2026-03-29T00:59:59.000+00:00');
  });

  it.each([
    // Paris before and after the March 2026 DST change (01:00 UTC): +01:00, then +02:00.
    ['2026-03-29T00:59:59Z', 'Europe/Paris', '2026-03-29T01:59:59+01:00'],
    ['2026-03-29T01:00:00Z', 'Europe/Paris', '2026-03-29T03:00:00+02:00'],
    ['2026-03-28T23:00:00Z', 'Europe/Paris', '2026-03-29T00:00:00+01:00'],
    ['2026-11-27T18:30:00Z', 'Asia/Kolkata', '2026-11-28T00:00:00+05:30'],
    ['2026-11-28T05:00:00Z', 'America/New_York', '2026-11-28T00:00:00-05:00'],
    ['2026-11-28T00:00:00Z', 'UTC', '2026-11-28T00:00:00+00:00'],
    ['2026-11-28T00:00:00Z', 'Africa/Abidjan', '2026-11-28T00:00:00+00:00'],
  ])('writes %s in %s as the local time with its offset', (instant, zone, expected) => {
    expect(isoInZone(new Date(instant), zone)).toBe(expected);
    expect(Date.parse(isoInZone(new Date(instant), zone))).toBe(Date.parse(instant));
  });

  it.each([
    ['europe/paris', 'Europe/Paris'],
    ['EUROPE/PARIS', 'Europe/Paris'],
    ['utc', 'UTC'],
    ['etc/gmt+5', 'Etc/GMT+5'],
    ['Asia/Kolkata', 'Asia/Kolkata'],
    ['asia/kolkata', 'Asia/Calcutta'],
    ['us/eastern', 'America/New_York'],
    ['Mars/Olympus', null],
  ])('names the time zone %s as ClickHouse loads it: %s', (asked, named) => {
    expect(canonicalTimeZone(asked)).toBe(named);
  });
});
