import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type DynamicModule, Module } from '@nestjs/common';
import { activeRequestId, REQUEST_ID_HEADER } from '@meld/contracts';
import { pino, type DestinationStream, type LoggerOptions } from 'pino';
import { NestPinoLogger } from './nest-pino-logger';
import { urlRedactor } from './redact-url';
import { serializeError } from '@meld/contracts';

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

/** The pino options of every app: app name, request id, redactions. */
export function loggerOptions(app: string, level: string): LoggerOptions {
  const redactUrl = urlRedactor();
  return {
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
      // Not pino's default: it copies every property of an error, input included (ADR 0338).
      err: serializeError,
      req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: redactUrl(req.url) }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  };
}

@Module({})
class LoggerModule {}

/**
 * Structured JSON logs (pino) with the app name and the request id on every line; URLs redacted
 * (ADR 0104). Provides the `NestPinoLogger` that `bootstrapApp` gives Nest (ADR 0267). Lines go to
 * stdout unless a test passes its own `destination`.
 */
export function loggerModule(app: string, level: string, destination?: DestinationStream): DynamicModule {
  const logger = new NestPinoLogger(destination ? pino(loggerOptions(app, level), destination) : pino(loggerOptions(app, level)));
  return { module: LoggerModule, global: true, providers: [{ provide: NestPinoLogger, useValue: logger }], exports: [NestPinoLogger] };
}
