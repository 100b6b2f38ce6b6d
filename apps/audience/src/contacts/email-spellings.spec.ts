import { emailSpellings } from './email-spellings';

describe('emailSpellings', () => {
  it('is the address alone when every letter is ASCII', () => {
    expect(emailSpellings('jane.doe@example.com')).toEqual(['jane.doe@example.com']);
  });

  it('varies the case of each letter beyond ASCII, the all-lower spelling first', () => {
    expect(emailSpellings('élodie.ørsted@example.com')).toEqual(['élodie.ørsted@example.com', 'élodie.Ørsted@example.com', 'Élodie.ørsted@example.com', 'Élodie.Ørsted@example.com']);
  });

  it('leaves letters without a one-letter upper case (ß) as they are, and bounds the spellings', () => {
    expect(emailSpellings('straße@example.com')).toEqual(['straße@example.com']);
    const many = emailSpellings('éééééééééé@example.com');
    expect(many).toHaveLength(65);
    expect(many[0]).toBe('éééééééééé@example.com');
    expect(many).toContain('ÉÉÉÉÉÉÉÉÉÉ@example.com');
  });
});
