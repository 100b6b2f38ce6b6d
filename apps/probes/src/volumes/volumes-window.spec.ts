import { effectiveWindowDays, volumesWindow } from './volumes-window';

const now = new Date('2027-03-01T12:00:00.000Z');

describe('event volumes window (product spec "Limits", ADR 0166)', () => {
  it.each([
    [0, 90, 'under 10,000 contacts: 90 days'],
    [9_999, 90, 'under 10,000 contacts: 90 days'],
    [10_000, 30, '10,000 to 20,000 contacts: 30 days'],
    [19_999, 30, '10,000 to 20,000 contacts: 30 days'],
    [20_000, 30, '10,000 to 20,000 contacts: 30 days'],
    [20_001, 15, 'above 20,000 contacts: 15 days'],
  ])('defaults by audience size: %i contacts → %i days', (audienceSize, days, band) => {
    expect(volumesWindow({ audienceSize, plan: 'xl', now })).toMatchObject({ days, requestedDays: days, band, clamped: false, clampedBy: null });
  });

  it('clamps a requested or default window by the plan look-back and says so', () => {
    expect(volumesWindow({ audienceSize: 5, requestedDays: 400, plan: 'l', now })).toMatchObject({ days: 180, requestedDays: 400, band: 'requested', clamped: true, clampedBy: 'plan', planLookBackDays: 180 });
    expect(volumesWindow({ audienceSize: 5, plan: 's', now })).toMatchObject({ days: 30, requestedDays: 90, clamped: true, clampedBy: 'plan' });
    expect(volumesWindow({ audienceSize: 5, plan: null, now })).toMatchObject({ days: 30, planLookBackDays: 30 });
    expect(volumesWindow({ audienceSize: 5, requestedDays: 7, plan: 'm', now })).toMatchObject({ days: 7, clamped: false, from: '2027-02-22T12:00:00.000Z', to: '2027-03-01T12:00:00.000Z' });
  });

  it('shortens a type with a shorter retention only', () => {
    expect(effectiveWindowDays(90, 30)).toBe(30);
    expect(effectiveWindowDays(15, 30)).toBe(15);
    expect(effectiveWindowDays(90, null)).toBe(90);
  });
});
