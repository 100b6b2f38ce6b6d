import { request as httpRequest } from 'node:http';
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { Body, Controller, Delete, type INestApplication, Module, Param, Post } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { HttpErrorFilter } from '../errors/http-error.filter';
import { loggerModule } from '../logging/logger.module';
import { bootstrapApp } from './bootstrap-app';
import { INTERNAL_MAX_HEADER_BYTES, PUBLIC_MAX_HEADER_BYTES } from './request-limits';

@Controller()
class EchoController {
  @Post(['/v1/echo', '/admin/v1/echo', '/u/:code', '/oauth/token'])
  echo(@Body() body: unknown) {
    return { body: body ?? null };
  }

  @Post('/v1/by/:id')
  byId(@Param('id') id: string) {
    return { id };
  }

  @Delete('/v1/by/:id')
  remove(@Param('id') id: string, @Body() body: unknown) {
    return { id, body: body ?? null };
  }
}

@Module({ imports: [loggerModule('bodies-spec', 'silent', { write: () => undefined })], controllers: [EchoController], providers: [{ provide: APP_FILTER, useClass: HttpErrorFilter }] })
class BodiesSpecModule {}

const NOT_JSON = { statusCode: 400, error: 'Bad Request', message: 'the body must be JSON, sent with Content-Type: application/json' };

// What every app's Fastify does with a body and a URL before any handler runs (ADR 0012).
describe('request bodies and URLs every app takes or refuses', () => {
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    app = await bootstrapApp({ app: 'bodies-spec', module: BodiesSpecModule, host: '127.0.0.1', port: 0, maxHeaderSize: INTERNAL_MAX_HEADER_BYTES });
    base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });
  afterAll(() => app?.close());

  const post = async (path: string, contentType: string, body: string) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body });
    return { status: res.status, body: (await res.json()) as unknown };
  };

  it('takes a DELETE with Content-Type: application/json and no body (HTTP clients send the header on every call); a JSON body there is still read', async () => {
    const remove = async (body?: string) => {
      const res = await fetch(`${base}/v1/by/c-1`, { method: 'DELETE', headers: { 'content-type': 'application/json' }, body });
      return { status: res.status, body: (await res.json()) as unknown };
    };
    expect(await remove()).toEqual({ status: 200, body: { id: 'c-1', body: null } });
    expect(await remove('')).toEqual({ status: 200, body: { id: 'c-1', body: null } });
    expect(await remove('{"a":1}')).toEqual({ status: 200, body: { id: 'c-1', body: { a: 1 } } });
    expect((await remove('{')).status).toBe(400);
    // A POST without its body is still refused, naming why.
    expect(await post('/v1/echo', 'application/json', '')).toEqual({ status: 400, body: expect.objectContaining({ message: 'the body is empty but content-type is application/json' }) });
  });

  it('reads JSON on every path', async () => {
    expect(await post('/v1/echo', 'application/json; charset=utf-8', '{"a":1}')).toEqual({ status: 201, body: { body: { a: 1 } } });
  });

  it('refuses a __proto__ key with the 400 of a bad field: the message names its path, details.fields holds it as a validation error does', async () => {
    const message = 'the key __proto__ is not allowed';
    expect(await post('/v1/echo', 'application/json', '{"items":[{"a":1},{"__proto__":{"x":1}}]}')).toEqual({
      status: 400,
      body: { statusCode: 400, error: 'Bad Request', message: `$.items[1].__proto__: ${message}`, details: { fields: [{ path: 'items[1].__proto__', message }] } },
    });
    expect((await post('/v1/echo', 'application/json', '[{}, {"\\u005f_proto__": 1}]')).body).toMatchObject({ message: `$[1].__proto__: ${message}`, details: { fields: [{ path: '[1].__proto__', message }] } });
    expect((await post('/v1/echo', 'application/json', '{"__proto__": 1}')).body).toMatchObject({ details: { fields: [{ path: '__proto__', message }] } });
  });

  it('refuses a JSON body that is not UTF-8 rather than storing U+FFFD in place of its bytes', async () => {
    const send = async (contentType: string, bytes: Buffer) => {
      const res = await fetch(`${base}/v1/echo`, { method: 'POST', headers: { 'content-type': contentType }, body: bytes });
      return { status: res.status, body: (await res.json()) as unknown };
    };
    const notUtf8 = { statusCode: 400, error: 'Bad Request', message: 'the body is not valid UTF-8: JSON is sent in UTF-8 (RFC 8259 §8.1), whatever charset the Content-Type names' };
    // `Café` in Latin-1 (é is the one byte E9), and a UTF-8 sequence cut short.
    expect(await send('application/json; charset=iso-8859-1', Buffer.from('{"name":"Café"}', 'latin1'))).toEqual({ status: 400, body: notUtf8 });
    expect(await send('application/json', Buffer.concat([Buffer.from('{"name":"'), Buffer.from('é', 'utf8').subarray(0, 1), Buffer.from('"}')]))).toEqual({ status: 400, body: notUtf8 });
    expect(await send('application/json', Buffer.from('{"name":"Café 😀"}', 'utf8'))).toEqual({ status: 201, body: { body: { name: 'Café 😀' } } });
  });

  it('refuses a compressed body with a 415 naming its Content-Encoding (an app that decodes none), not as a body that is not UTF-8 (gzip bytes are not)', async () => {
    const send = async (encoding: string, bytes: Buffer) => {
      const res = await fetch(`${base}/v1/echo`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': encoding }, body: bytes });
      return { status: res.status, acceptEncoding: res.headers.get('accept-encoding'), body: (await res.json()) as unknown };
    };
    const json = '[{"_user_id":"u-1"}]';
    const unsupported = (name: string) => ({
      status: 415,
      acceptEncoding: 'identity',
      body: { statusCode: 415, error: 'Unsupported Media Type', message: `Content-Encoding ${name} is not supported: send the JSON body uncompressed (identity)` },
    });
    expect(await send('gzip', gzipSync(json))).toEqual(unsupported('gzip'));
    expect(await send('br', Buffer.from(json))).toEqual(unsupported('br'));
    expect(await send('identity', Buffer.from(json))).toEqual({ status: 201, acceptEncoding: null, body: { body: [{ _user_id: 'u-1' }] } });
  });

  it.each(['/v1/echo', '/v1/echo?x=1', '/admin/v1/echo'])('refuses a form or text on the JSON API path %s, never reading it as a body', async (path) => {
    expect(await post(path, 'application/x-www-form-urlencoded', 'text=hi')).toEqual({ status: 400, body: NOT_JSON });
    expect(await post(path, 'text/plain;charset=UTF-8', '{"text":"hi"}')).toEqual({ status: 400, body: NOT_JSON });
    // A Content-Type that is no media type at all: not Fastify's bare 415.
    expect(await post(path, 'application/json, text/plain', '{"text":"hi"}')).toEqual({ status: 400, body: NOT_JSON });
  });

  it('still reads the forms of the pages that post them (unsubscribe, OAuth)', async () => {
    expect(await post('/u/abc', 'application/x-www-form-urlencoded', 'confirm=yes')).toEqual({ status: 201, body: { body: { confirm: 'yes' } } });
    expect(await post('/oauth/token', 'application/x-www-form-urlencoded', 'grant_type=x&scope=a&scope=b')).toEqual({ status: 201, body: { body: { grant_type: 'x', scope: ['a', 'b'] } } });
    expect(await post('/oauth/token', 'text/plain', 'grant_type=x')).toEqual({ status: 201, body: { body: 'grant_type=x' } });
    expect(await post('/u/abc', 'application/x-www-form-urlencoded', '__proto__=x')).toMatchObject({ status: 400 });
  });

  it('refuses a compressed form or text on the pages that post them with a 415, never reading its bytes as the form', async () => {
    const send = async (path: string, contentType: string, bytes: Buffer) => {
      const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': contentType, 'content-encoding': 'gzip' }, body: bytes });
      return { status: res.status, acceptEncoding: res.headers.get('accept-encoding'), body: (await res.json()) as unknown };
    };
    const refused = {
      status: 415,
      acceptEncoding: 'identity',
      body: { statusCode: 415, error: 'Unsupported Media Type', message: 'Content-Encoding gzip is not supported: send the body uncompressed (identity)' },
    };
    expect(await send('/oauth/token', 'application/x-www-form-urlencoded', gzipSync('grant_type=x'))).toEqual(refused);
    expect(await send('/u/abc', 'application/x-www-form-urlencoded', gzipSync('confirm=yes'))).toEqual(refused);
    expect(await send('/oauth/token', 'text/plain', gzipSync('grant_type=x'))).toEqual(refused);
  });

  it('answers a path that is not valid percent-encoding in the error shape, without quoting it', async () => {
    const res = await post('/v1/by/jane%zz@example.com', 'application/json', '{}');
    expect(res.status).toBe(400);
    expect(Object.keys(res.body as object).sort()).toEqual(['error', 'message', 'statusCode']);
    expect(JSON.stringify(res.body)).not.toContain('example.com');
  });

  it('takes a request line and headers beyond the public limit: the principal of a long query repeats it', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${base}/v1/echo?q=${'a'.repeat(PUBLIC_MAX_HEADER_BYTES)}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-meld-principal': 'b'.repeat(2 * PUBLIC_MAX_HEADER_BYTES) } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end('{}');
    });
    expect(status).toBe(201);
  });
});

// Ingest's bodies (ADR 0012): gzip and deflate are inflated, the body limit holds for the inflated JSON too.
describe('compressed JSON bodies of an app that decodes them', () => {
  const LIMIT = 1024 * 1024;
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    app = await bootstrapApp({ app: 'bodies-spec', module: BodiesSpecModule, host: '127.0.0.1', port: 0, bodyLimit: LIMIT, decodeBodies: true });
    base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });
  afterAll(() => app?.close());

  const send = async (encoding: string | undefined, bytes: Buffer) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(encoding === undefined ? {} : { 'content-encoding': encoding }) };
    const res = await fetch(`${base}/v1/echo`, { method: 'POST', headers, body: bytes });
    return { status: res.status, acceptEncoding: res.headers.get('accept-encoding'), body: (await res.json()) as { body?: unknown; message?: string } };
  };
  const batch = [{ _user_id: 'u-1', name: 'Café 😀' }, { _user_id: 'u-2' }];
  const json = JSON.stringify(batch);

  it('reads gzip (x-gzip too) and deflate bodies, the coding in any case, and identity or none as before', async () => {
    for (const [encoding, bytes] of [
      ['gzip', gzipSync(json)],
      ['GZip', gzipSync(json)],
      [' x-gzip ', gzipSync(json)],
      ['identity, gzip', gzipSync(json)],
      ['deflate', deflateSync(json)],
      ['Deflate', deflateSync(json)],
      ['identity', Buffer.from(json)],
      [undefined, Buffer.from(json)],
    ] as const) {
      expect({ encoding, ...(await send(encoding, bytes)) }).toEqual({ encoding, status: 201, acceptEncoding: null, body: { body: batch } });
    }
  });

  it('applies the body limit to the inflated JSON: a body that compresses within it but inflates past it is a 413', async () => {
    const within = JSON.stringify([{ _user_id: 'u-1', pad: 'a'.repeat(LIMIT - 100) }]);
    expect((await send('gzip', gzipSync(within))).status).toBe(201);
    const past = JSON.stringify([{ _user_id: 'u-1', pad: 'a'.repeat(LIMIT) }]);
    expect(await send('gzip', gzipSync(past))).toEqual({ status: 413, acceptEncoding: null, body: { statusCode: 413, error: 'Payload Too Large', message: `request body larger than ${LIMIT} bytes once decompressed (Content-Encoding gzip)` } });
    expect((await send('deflate', deflateSync(past))).status).toBe(413);
  });

  it('refuses a zip bomb (1 MB inflating to 1 GiB) with a 413, quickly, never holding more than about the limit inflated', async () => {
    // 16 gzip members of 64 MiB of zeros each: a valid gzip stream of 1,044,000 bytes.
    const member = gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
    const bomb = Buffer.concat(Array.from({ length: 16 }, () => member));
    expect(bomb.length).toBeLessThan(LIMIT);
    const before = process.memoryUsage().arrayBuffers;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 1);
    const started = Date.now();
    const res = await send('gzip', bomb).finally(() => clearInterval(sampler));
    expect(res).toMatchObject({ status: 413, body: { message: `request body larger than ${LIMIT} bytes once decompressed (Content-Encoding gzip)` } });
    // Inflating all of it takes seconds and 1 GiB; the cap stops one zlib chunk past the limit.
    expect(Date.now() - started).toBeLessThan(2000);
    expect(peak - before).toBeLessThan(64 * 1024 * 1024);
  });

  it('answers a corrupt or truncated body with a 400 naming the Content-Encoding', async () => {
    const gzipped = gzipSync(json);
    const corrupt = Buffer.from(gzipped);
    corrupt.fill(0x55, 10, 20);
    for (const [encoding, bytes] of [
      ['gzip', corrupt],
      ['gzip', gzipped.subarray(0, gzipped.length - 12)],
      ['gzip', Buffer.from(json)],
      ['gzip', Buffer.alloc(0)],
      // Raw deflate without its zlib wrapper is not HTTP's deflate (RFC 9110 §8.4.1.2).
      ['deflate', deflateRawSync(json)],
    ] as const) {
      const res = await send(encoding, bytes);
      expect({ encoding, status: res.status, message: res.body.message }).toEqual({ encoding, status: 400, message: expect.stringMatching(new RegExp(`^Content-Encoding ${encoding}: the body is not valid (gzip|zlib \\(deflate\\)) data \\(.+\\)$`)) });
    }
  });

  it('refuses any other coding, or codings stacked, with a 415 whose Accept-Encoding names those it takes', async () => {
    for (const encoding of ['br', 'zstd', 'compress', 'gzip, gzip', 'deflate, gzip', '__proto__', 'constructor']) {
      expect({ encoding, ...(await send(encoding, gzipSync(json))) }).toEqual({
        encoding,
        status: 415,
        acceptEncoding: 'gzip, deflate, identity',
        body: { statusCode: 415, error: 'Unsupported Media Type', message: `Content-Encoding ${encoding} is not supported: send the JSON body compressed with gzip or deflate, or uncompressed (identity)` },
      });
    }
  });

  it('checks the inflated JSON as any other: UTF-8, __proto__ keys', async () => {
    expect((await send('gzip', gzipSync(Buffer.from('{"name":"Café"}', 'latin1')))).body.message).toMatch(/^the body is not valid UTF-8/);
    expect(await send('gzip', gzipSync('{"__proto__":{"x":1}}'))).toMatchObject({ status: 400, body: { message: '$.__proto__: the key __proto__ is not allowed' } });
  });
});
