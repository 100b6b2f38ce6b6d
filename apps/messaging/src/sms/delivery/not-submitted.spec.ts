import { LoggableError } from '@meld/contracts';
import { notSubmittedError } from './not-submitted';

describe('notSubmittedError: what a message whose send job gave up stores as its error', () => {
  it('keeps our own SMSC errors whole', () => {
    expect(notSubmittedError(new LoggableError('no SMSC session'))).toBe('not submitted: no SMSC session');
  });

  it('gives a store error its class and code, never its text', () => {
    const pg = Object.assign(new Error('invalid input syntax for type uuid: "+447400123456"'), { code: '22P02' });
    expect(notSubmittedError(pg)).toBe('not submitted: Error 22P02');
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.3.7:6379'), { code: 'ECONNREFUSED' });
    expect(notSubmittedError(refused)).toBe('not submitted: Error ECONNREFUSED');
    expect(notSubmittedError('boom')).toBe('not submitted: a thrown string');
  });
});
