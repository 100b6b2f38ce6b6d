import { HttpErrorFilter, isUnstorableText } from './http-error.filter';

const reply = () => {
  const r = { status: 0, body: undefined as unknown, code: (s: number) => ((r.status = s), r), send: (b: unknown) => ((r.body = b), r) };
  return r;
};
const host = (r: ReturnType<typeof reply>) => ({ getType: () => 'http', switchToHttp: () => ({ getResponse: () => r }) }) as never;

describe('HttpErrorFilter', () => {
  it('answers a Postgres "cannot store this text" error (U+0000) with 400, also wrapped by TypeORM', () => {
    for (const err of [Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' }), { driverError: { code: '22P05' }, message: 'unsupported Unicode escape sequence' }]) {
      expect(isUnstorableText(err)).toBe(true);
      const r = reply();
      new HttpErrorFilter().catch(err, host(r));
      expect(r.status).toBe(400);
      expect((r.body as { message: string }).message).toContain('U+0000');
    }
  });

  it('keeps any other database error a 500 that reveals nothing', () => {
    const r = reply();
    new HttpErrorFilter().catch(Object.assign(new Error('relation "x" does not exist'), { code: '42P01' }), host(r));
    expect([r.status, (r.body as { message: string }).message]).toEqual([500, 'internal error']);
  });
});
