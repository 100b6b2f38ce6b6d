import { logLevel } from 'kafkajs';
import { kafkajsLine } from './logger';

describe('kafkajsLine (ADR 0338)', () => {
  const line = (message: unknown, extra: Record<string, unknown> = {}, level = logLevel.ERROR) =>
    kafkajsLine('Runner', level, { timestamp: 't', logger: 'kafkajs', message, ...extra } as never);

  it('cuts the error text kafkajs appends at warn and error', () => {
    expect(line('Crash: DatabaseError: invalid input syntax for type uuid: "jane@x.com"').msg).toBe('Crash');
    expect(line('Failed to send messages: value "0612345678" too long', {}, logLevel.WARN).msg).toBe('Failed to send messages');
  });

  it.each([
    ['Connection error: connect ECONNREFUSED 10.0.0.5:9092', 'Connection error: ECONNREFUSED'],
    ['Connection error: getaddrinfo ENOTFOUND kafka-0.kafka', 'Connection error: ENOTFOUND'],
    ['Connection error: read ECONNRESET', 'Connection error: ECONNRESET'],
    ['Connection timeout: ETIMEDOUT', 'Connection timeout: ETIMEDOUT'],
    ['Crash: Error: EACCES is not the start of a socket error', 'Crash'],
  ])('keeps a socket error code, nothing after it: %j', (message, expected) => {
    expect(line(message).msg).toBe(expected);
  });

  it('an Error becomes its summary; error text given as a string is dropped; a stack keeps its frames', () => {
    const err = Object.assign(new Error('duplicate key value (email)=(jane@x.com)'), { code: '23505' });
    const { obj, msg } = line(err, { error: 'jane@x.com', stack: 'Error: jane@x.com\n    at f (x.js:1:1)', broker: '10.0.0.5:9092' });
    expect(msg).toBe('Error 23505');
    expect(obj).toEqual({ kafkajs: 'Runner', stack: '    at f (x.js:1:1)', broker: '10.0.0.5:9092', timestamp: 't', logger: 'kafkajs' });
  });

  it('keeps debug and info messages whole (kafkajs writes no error text there)', () => {
    expect(line('Starting: consumer group x', {}, logLevel.INFO).msg).toBe('Starting: consumer group x');
  });
});
