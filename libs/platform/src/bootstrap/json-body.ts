import { isUtf8 } from 'node:buffer';
import { gunzip, inflate } from 'node:zlib';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import { jsonTooDeep, jsonTooDeepMessage } from './json-depth';

/**
 * A 400 that names why the JSON body was refused (Fastify's default parser says only "not valid JSON");
 * `details` when a key of the body is at fault, in the shape of a validation error (`parseInput`).
 */
export class BadJsonBody extends Error {
  readonly statusCode = 400;
  constructor(
    message: string,
    readonly details?: { fields: Array<{ path: string; message: string }> },
  ) {
    super(message);
  }
}

// `__proto__` spelled with any JSON escapes: only then is the parsed tree scanned.
const MAYBE_PROTO = /(?:_|\\u005[fF]){2}(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[fF])(?:t|\\u0074)(?:o|\\u006[fF])(?:_|\\u005[fF]){2}/;

/**
 * JSON bodies: a depth check before anything parses (ADR 0113), JSON.parse, then a refusal of any `__proto__` key (Object.assign or a merge
 * into a plain object would replace its prototype), naming the key's path (ADR 0124). Other
 * prototype member names (`constructor`, `toString`…) are ordinary data: every lookup keyed
 * by them uses a Map or a null-prototype object.
 */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0) throw new BadJsonBody('the body is empty but content-type is application/json');
  if (jsonTooDeep(text)) throw new BadJsonBody(jsonTooDeepMessage());
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new BadJsonBody(`the body is not valid JSON: ${(err as Error).message}`);
  }
  if (MAYBE_PROTO.test(text)) {
    const path = protoKeyPath(parsed);
    if (path) {
      const message = 'the key __proto__ is not allowed';
      // details.fields as every other bad field of a body has it (`items[1].__proto__`, ADR 0124).
      throw new BadJsonBody(`$${path.startsWith('[') ? '' : '.'}${path}: ${message}`, { fields: [{ path, message }] });
    }
  }
  return parsed;
}

/** The path of a `__proto__` key as `parseInput` writes a field's (`items[1].__proto__`). Iterative (a hostile body may nest deeper than the call stack). */
function protoKeyPath(root: unknown): string | null {
  const stack: Array<[unknown, string]> = [[root, '']];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push([item, `${path}[${i}]`]));
      continue;
    }
    for (const key of Object.keys(value)) {
      const keyPath = path ? `${path}.${key}` : key;
      if (key === '__proto__') return keyPath;
      stack.push([(value as Record<string, unknown>)[key], keyPath]);
    }
  }
  return null;
}

/**
 * An `onRequest` hook: a Content-Type that is no media type (`application/json, text/plain`,
 * `json`) was Fastify's bare 415 before any parser or handler (ADR 0012). It names nothing, so
 * it goes, and the body is one sent without a Content-Type.
 */
export function dropContentTypeThatIsNoMediaType(request: FastifyRequest, _reply: unknown, done: () => void): void {
  if (request.headers['content-type'] !== undefined && request.mediaType === undefined) delete request.headers['content-type'];
  done();
}

const NOT_JSON = 'the body must be JSON, sent with Content-Type: application/json';
const NOT_UTF8 = 'the body is not valid UTF-8: JSON is sent in UTF-8 (RFC 8259 §8.1), whatever charset the Content-Type names';

/**
 * Paths of the JSON APIs (product, ingest, admin), whose bodies are JSON only. Forms stay for the
 * pages that post them (OAuth consent and token, unsubscribe), outside these paths.
 */
const JSON_ONLY_PATH = /^\/(?:admin\/)?v1(?:[/?]|$)/;

/** A body refused for its Content-Encoding: 415 (with `Accept-Encoding`, RFC 9110 §15.5.16), 413 or 400. */
export class BodyEncodingRefused extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

type Decoder = (body: Buffer, options: { maxOutputLength: number }, done: (err: Error | null, out: Buffer) => void) => void;

/** The content codings an app that decodes bodies takes (RFC 9110 §8.4.1; `x-gzip` is gzip); a Map, the header is the client's. */
const DECODERS = new Map<string, Decoder>([
  ['gzip', gunzip],
  ['x-gzip', gunzip],
  ['deflate', inflate],
]);

/** The body's content codings, lower-cased, `identity` left out; null for none. A bounded quote: the header is the client's. */
function contentCoding(header: unknown): string | null {
  const value = Array.isArray(header) ? header.join(',') : typeof header === 'string' ? header : '';
  const codings = value
    .toLowerCase()
    .split(',')
    .map((coding) => coding.trim())
    .filter((coding) => coding !== '' && coding !== 'identity');
  return codings.length === 0 ? null : codings.join(', ').slice(0, 40);
}

type BodyParser = (request: { url: string; headers: Record<string, unknown> }, body: Buffer | string, done: (err: Error | null, body?: unknown) => void) => void;

/**
 * The 415 of a form or a text (the pages that post them) sent compressed, else null: no app
 * decodes those, and their compressed bytes were read as the form itself (ADR 0012).
 */
function encodedBody(request: { headers: Record<string, unknown> }): BodyEncodingRefused | null {
  const coding = contentCoding(request.headers['content-encoding']);
  return coding === null ? null : new BodyEncodingRefused(415, `Content-Encoding ${coding} is not supported: send the body uncompressed (identity)`, { 'accept-encoding': 'identity' });
}

/**
 * Replaces Nest's JSON body parser (registered at init unless one is set first). With
 * `decodeBodies`, a gzip or deflate body is inflated, at most `bodyLimit` bytes of it (ADR 0012):
 * the limit holds for the compressed body (Fastify's, before this parser) and for the JSON it
 * inflates to; without it, any coding but `identity` is a 415.
 */
export function useJsonBodyParser(app: NestFastifyApplication, bodyLimit: number, decodeBodies = false): void {
  const fastify = app.getHttpAdapter().getInstance();
  // A body with no Content-Type, or one no parser takes, is a malformed body to the API's clients
  // (product and ingest spec: 400 with a message), not Fastify's bare 415.
  fastify.addContentTypeParser('*', (_request: unknown, _payload: unknown, done: (err: Error | null, body?: unknown) => void) => done(new BadJsonBody(NOT_JSON)));
  fastify.addHook('onRequest', dropContentTypeThatIsNoMediaType);
  // Fastify parses text/plain and Nest forms by default: on the JSON APIs a form was read as an
  // object (`text=hi` sent a direct SMS) and text as a string ("expected object, received
  // string"); both are refused there like any other body that is not JSON (ADR 0012).
  fastify.removeContentTypeParser('text/plain');
  fastify.addContentTypeParser('text/plain', { parseAs: 'string', bodyLimit }, ((request, body, done) =>
    JSON_ONLY_PATH.test(request.url) ? done(new BadJsonBody(NOT_JSON)) : done(encodedBody(request), body)) as BodyParser);
  const form = (app.getHttpAdapter() as unknown as { getDefaultBodyParser?(type: string): BodyParser | undefined }).getDefaultBodyParser?.('application/x-www-form-urlencoded');
  if (!form) throw new Error("Nest's form body parser is not where it was (FastifyAdapter.getDefaultBodyParser): forms would go unparsed");
  app.useBodyParser('application/x-www-form-urlencoded', { bodyLimit }, (request, body, done) => {
    if (JSON_ONLY_PATH.test(request.url)) return done(new BadJsonBody(NOT_JSON), undefined);
    const refused = encodedBody(request);
    return refused ? done(refused, undefined) : form(request, body, done);
  });
  const accepted = decodeBodies
    ? { 'accept-encoding': 'gzip, deflate, identity', how: 'compressed with gzip or deflate, or uncompressed (identity)' }
    : { 'accept-encoding': 'identity', how: 'uncompressed (identity)' };
  app.useBodyParser('application/json', { bodyLimit }, (request, body, done) => {
    // A DELETE carries no body, yet HTTP clients (axios, fetch wrappers) send this Content-Type on
    // every call: its empty body is no body, not the 400 a POST without its body gets (ADR 0012).
    if (body.length === 0 && (request as { method?: string }).method === 'DELETE') return done(null, undefined);
    const header = (request as { headers?: Record<string, unknown> }).headers?.['content-encoding'];
    const coding = header === undefined ? null : contentCoding(header);
    if (coding === null) return parseJsonBuffer(body, done);
    const decode = decodeBodies ? DECODERS.get(coding) : undefined;
    // RFC 9110 §15.5.16: an unsupported content coding is a 415 whose Accept-Encoding names those taken.
    if (!decode) return done(new BodyEncodingRefused(415, `Content-Encoding ${coding} is not supported: send the JSON body ${accepted.how}`, { 'accept-encoding': accepted['accept-encoding'] }), undefined);
    // The compressed body is at most bodyLimit already; inflating stops one zlib chunk (16 KiB) past bodyLimit.
    decode(Buffer.isBuffer(body) ? body : Buffer.from(body), { maxOutputLength: bodyLimit }, (err, inflated) => {
      if (!err) return parseJsonBuffer(inflated, done);
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return done(new BodyEncodingRefused(413, `request body larger than ${bodyLimit} bytes once decompressed (Content-Encoding ${coding})`), undefined);
      // zlib's reason (`incorrect header check`, `unexpected end of file`) quotes none of the body.
      done(new BadJsonBody(`Content-Encoding ${coding}: the body is not valid ${coding === 'deflate' ? 'zlib (deflate)' : 'gzip'} data (${err.message})`), undefined);
    });
  });
}

/** A JSON body's bytes, checked for UTF-8 then parsed (`parseJsonBody`). */
function parseJsonBuffer(body: Buffer | string, done: (err: Error | null, body?: unknown) => void): void {
  // Decoded as it is, a byte that is not UTF-8 (a Latin-1 `é`, a cut sequence) became U+FFFD and
  // was stored in its place without a word: a contact's name, an event parameter (ADR 0012).
  if (Buffer.isBuffer(body) && !isUtf8(body)) return done(new BadJsonBody(NOT_UTF8), undefined);
  let parsed: unknown;
  try {
    parsed = parseJsonBody(body.toString('utf8'));
  } catch (err) {
    return done(err as Error, undefined);
  }
  done(null, parsed);
}
