import { HttpErrorFilter, isUnstorableText } from './http-error.filter';
import { RetryLaterException } from './retry-later';

const reply = () => {
  const r = {
    status: 0,
    body: undefined as unknown,
    headers: {} as Record<string, string>,
    code: (s: number) => ((r.status = s), r),
    header: (k: string, v: string) => ((r.headers[k] = v), r),
    send: (b: unknown) => ((r.body = b), r),
  };
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

  it('answers a ClickHouse timeout (18.16 text, current code, the client giving up) with 503 and Retry-After (ADR 0114)', () => {
    for (const err of [new Error('Code: 159, e.displayText() = DB::Exception: Timeout exceeded: elapsed 1.2 seconds, maximum: 1'), Object.assign(new Error('Timeout exceeded'), { code: '159' }), new Error('Timeout error.')]) {
      const r = reply();
      new HttpErrorFilter().catch(err, host(r));
      expect([r.status, r.headers['retry-after']]).toEqual([503, '10']);
      expect(r.body).toMatchObject({ details: { limit: 'max_execution_time' } });
    }
  });

  it('answers a ClickHouse memory limit with 422: the filter is too expensive (ADR 0114)', () => {
    const r = reply();
    new HttpErrorFilter().catch(new Error('Code: 241, e.displayText() = DB::Exception: Memory limit (for query) exceeded'), host(r));
    expect(r.status).toBe(422);
    expect((r.body as { message: string }).message).toMatch(/^the filter is too expensive/);
  });

  it('answers a RetryLaterException with 503, its message and its Retry-After', () => {
    const r = reply();
    new HttpErrorFilter().catch(new RetryLaterException('the queue did not answer: retry later', 5), host(r));
    expect([r.status, r.headers['retry-after'], r.body]).toEqual([503, '5', { statusCode: 503, error: 'Service Unavailable', message: 'the queue did not answer: retry later' }]);
  });
});
