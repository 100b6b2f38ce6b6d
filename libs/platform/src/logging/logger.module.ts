import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { REQUEST_ID_HEADER } from '@meld/contracts';
import { LoggerModule } from 'nestjs-pino';
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

/** Structured JSON logs (pino) with the app name and the request id on every line; URLs redacted (ADR 0104). */
export function loggerModule(app: string, level: string) {
  const redactUrl = urlRedactor();
  return LoggerModule.forRoot({
    pinoHttp: {
      // Fastify (through middie) hands pino-http the raw request carrying Fastify's id.
      genReqId: (req) => (req as IncomingMessage & { id?: string }).id ?? requestIdOf(req),
      level,
      base: { app },
      customAttributeKeys: { reqId: 'requestId' },
      redact: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-meld-principal"]'],
      // Fastify's onResponse hook writes the access log (access-log.ts); this one would double it.
      autoLogging: false,
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: redactUrl(req.url) }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    },
  });
}
