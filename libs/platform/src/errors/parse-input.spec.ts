import { BadRequestException } from '@nestjs/common';
import { z } from 'zod';
import { parseInput } from './parse-input';

function refusal(schema: z.ZodType, input: unknown): { message: string; details: { fields: Array<{ path: string; message: string }> } } {
  try {
    parseInput(schema, input);
  } catch (err) {
    expect(err).toBeInstanceOf(BadRequestException);
    return (err as BadRequestException).getResponse() as never;
  }
  throw new Error('accepted');
}

describe('parseInput', () => {
  const schema = z.strictObject({ window: z.int().optional(), root: z.strictObject({ type: z.string() }).optional() });

  it('names each unknown key by its own path, nested ones included', () => {
    const body = refusal(schema, { colour: 'red', constructor: 1, root: { type: 'group', extra: true } });
    expect(body.details.fields).toEqual([
      { path: 'root.extra', message: 'unknown field' },
      { path: 'colour', message: 'unknown field' },
      { path: 'constructor', message: 'unknown field' },
    ]);
    expect(body.message).toBe('invalid body: root.extra: unknown field; colour: unknown field; constructor: unknown field');
  });

  it('names the field of any other issue', () => {
    expect(refusal(schema, { window: 2.5 }).details.fields).toEqual([{ path: 'window', message: expect.any(String) }]);
  });

  it('returns the parsed value when valid', () => {
    expect(parseInput(schema, { window: 3 })).toEqual({ window: 3 });
  });
});
