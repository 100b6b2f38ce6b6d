import { inboundNumber, keywordConsent } from './keywords';

describe('keywordConsent (ADR 0183)', () => {
  const project = { optOut: ['STOP', 'UNSUBSCRIBE'], optIn: ['START'] };
  it.each([
    ['STOP', 'opt-out'],
    ['  stop!  ', 'opt-out'],
    ['Unsubscribe.', 'opt-out'],
    ['start', 'opt-in'],
    ['please stop texting me', null],
    ['STOPALL', null],
    ['', null],
  ])('%j → %s with the project keywords', (text, expected) => {
    expect(keywordConsent(text, project)).toBe(expected);
  });

  it('no keywords configured (null): the carrier-standard set', () => {
    expect(keywordConsent('quit', { optOut: null, optIn: null })).toBe('opt-out');
    expect(keywordConsent('unstop', { optOut: null, optIn: null })).toBe('opt-in');
  });

  it('a keyword in both lists opts out', () => {
    expect(keywordConsent('yes', { optOut: ['YES'], optIn: ['YES'] })).toBe('opt-out');
  });
});

describe('inboundNumber (ADR 0343)', () => {
  it.each([
    ['447400123700', '+447400123700'],
    ['+447400123700', '+447400123700'],
    [' 33612345678 ', '+33612345678'],
    ['ACME', null],
    ['', null],
    ['+', null],
    ['+1', null],
    ['07400123700', null],
    ['4474001237009999', null],
    ['44 7400 123700', null],
  ])('%j → %s', (from, expected) => {
    expect(inboundNumber(from)).toBe(expected);
  });
});
