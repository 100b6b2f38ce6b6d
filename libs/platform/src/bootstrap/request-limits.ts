import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { REQUEST_ID_HEADER } from '@meld/contracts';
import { errorBody } from '../errors/error-body';

/**
 * Request line plus headers the public gateway accepts: Node's default, stated so it is a
 * decision (ADR 0012); more is Node's 431 in the error shape.
 */
export const PUBLIC_MAX_HEADER_BYTES = 16 * 1024;

/**
 * What an internal app accepts. The gateway forwards the path and query as they came and adds
 * the signed principal, which binds them and so carries them again, base64url-encoded (ADR
 * 0102): a query string the gateway let through at 9 KiB reached the app as ~22 KiB of
 * headers and came back as a 431 (ADR 0012, amended). This is room for the largest request
 * the gateway passes (16 KiB, the principal's ~1.4 times that, the caller's other headers).
 */
export const INTERNAL_MAX_HEADER_BYTES = 128 * 1024;

/** Longest path parameter any route takes: room for a 180-character user id or a 254-character email, percent-encoded. */
export const MAX_PATH_PARAM_LENGTH = 1024;

/** Whichever limit fits the app: the public one for the gateway, the internal one behind it. */
export const maxHeaderBytesFor = (publicFacing: boolean | undefined) => (publicFacing ? PUBLIC_MAX_HEADER_BYTES : INTERNAL_MAX_HEADER_BYTES);

/**
 * Fastify's `frameworkErrors`: errors its router raises before any route or error handler
 * runs (a path whose percent-encoding does not decode, a path parameter over
 * `maxParamLength`). Fastify's own answer adds a `code` key to the error shape and quotes the
 * path, which may hold a phone number or an email; this one is the shape of every other
 * refusal and names what is wrong, not the value. No onRequest hook runs for it: the request
 * id header is set here, as that hook sets it on every other answer.
 */
export function frameworkErrorReply(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
  const message = FRAMEWORK_MESSAGES.get(error.code) ?? 'the request URL cannot be read';
  reply.header(REQUEST_ID_HEADER, request.id).code(status);
  const answer = frameworkAnswers.get(request.server);
  if (answer?.(request, reply, message)) return;
  reply.type('application/json; charset=utf-8').send(errorBody(status, message));
}

/**
 * Answers an app gives to some of its router's errors itself: true when it took the request
 * (the status already set is the likely one; the access line reads the status at once). The
 * gateway counts a /v1 path it cannot read against the caller's rate limit like any other
 * request (ADR 0011).
 */
export type FrameworkErrorAnswer = (request: FastifyRequest, reply: FastifyReply, message: string) => boolean;
const frameworkAnswers = new WeakMap<object, FrameworkErrorAnswer>();

/** Routes `fastify`'s framework errors to `answer` first (one per instance). */
export function answerFrameworkErrors(fastify: object, answer: FrameworkErrorAnswer): void {
  frameworkAnswers.set(fastify, answer);
}

const FRAMEWORK_MESSAGES = new Map<string, string>([
  ['FST_ERR_BAD_URL', 'the request path is not valid percent-encoding (write "%" itself as %25)'],
  ['FST_ERR_MAX_PARAM_LENGTH', 'a path parameter is longer than any identifier, phone number or email this API takes'],
]);
