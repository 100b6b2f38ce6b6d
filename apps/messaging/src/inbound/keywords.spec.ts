import { inboundNumber, keywordConsent } from './keywords';

describe('keywordConsent (ADR 0183)', () => {
  const project = { optOut: ['STOP', 'UNSUBSCRIBE'], optIn: ['START'] };
  it.each([
    ['STOP', 'opt-out'],
    ['  stop!  ', 'opt-out'],
    ['Unsubscribe.', 'opt-out'],
    ['start', 'opt-in'],
    ['please stop texting me', null],
    ['yes', null],
    ['', null],
  ])('%j → %s with the project keywords', (text, expected) => {
    expect(keywordConsent(text, project)).toBe(expected);
  });

  it.each(['STOPALL', 'cancel', 'End.', ' QUIT! '])('%j opts out whatever opt-out keywords the project set (the carrier-standard set stays)', (text) => {
    expect(keywordConsent(text, project)).toBe('opt-out');
    expect(keywordConsent(text, { optOut: ['ARRET'], optIn: ['START'] })).toBe('opt-out');
    expect(keywordConsent(text, { optOut: [], optIn: null })).toBe('opt-out');
  });

  it.each([
    ['Stop?', 'opt-out'],
    ['"STOP",', 'opt-out'],
    ['\uFF33\uFF34\uFF2F\uFF30', 'opt-out'], // full-width ＳＴＯＰ
    ['S\u200BTOP', 'opt-out'], // a zero-width space inside
    ['STOP \u{1F6D1}', 'opt-out'],
    ['¡Stop!', 'opt-out'],
    ['Start 👍', 'opt-in'],
    ['stop it', null],
    ['s.t.o.p', null],
    ['?!', null],
  ])('%j → %s: forms, invisible characters, punctuation and emoji at the ends do not hide a keyword', (text, expected) => {
    expect(keywordConsent(text, project)).toBe(expected);
  });

  it("a project's accented keyword matches with or without its accents, and the reverse", () => {
    expect(keywordConsent('Arrêt', { optOut: ['ARRET'], optIn: null })).toBe('opt-out');
    expect(keywordConsent('arret', { optOut: ['ARRÊT'], optIn: null })).toBe('opt-out');
    expect(keywordConsent('ARRE\u0302T', { optOut: ['Arrêt'], optIn: null })).toBe('opt-out'); // decomposed ê
  });

  it("a project's own opt-out keyword opts out beside the standard set", () => {
    expect(keywordConsent('arret', { optOut: ['ARRET'], optIn: null })).toBe('opt-out');
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
