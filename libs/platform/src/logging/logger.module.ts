import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { activeRequestId, REQUEST_ID_HEADER } from '@meld/contracts';
import { LoggerModule } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import type { Options } from 'pino-http';
import { urlRedactor } from './redact-url';

export { REQUEST_ID_HEADER };
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Fastify's request id: the caller's `x-request-id` when it is sane (the gateway passes
 * its own on to the apps, so one id follows a request everywhere), else a new UUID.
 */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
}

/**
 * Structured JSON logs (pino) with the app name and the request id on every line; URLs redacted
 * (ADR 0104). Lines go to stdout unless a test passes its own `destination`.
 */
export function loggerModule(app: string, level: string, destination?: DestinationStream) {
  const redactUrl = urlRedactor();
  const options: Options = {
    level,
    base: { app },
    // The request id comes from the request's context (ADR 0187), which the traced server sets
    // before any handler runs; no per-request child logger, so no middleware engine (ADR 0231).
    mixin: () => {
      const requestId = activeRequestId();
      return requestId === undefined ? {} : { requestId };
    },
    redact: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-meld-principal"]'],
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: redactUrl(req.url) }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  };
  // No routes: pino-http's middleware would only build the child logger the mixin replaces.
  return LoggerModule.forRoot({ pinoHttp: destination ? [options, destination] : options, forRoutes: [] });
}
