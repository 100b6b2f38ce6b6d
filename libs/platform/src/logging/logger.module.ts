import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoggerModule } from 'nestjs-pino';

export const REQUEST_ID_HEADER = 'x-request-id';
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Takes the caller's request id when it is sane (the gateway passes its own on), else makes one. */
export function requestIdOf(req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers[REQUEST_ID_HEADER];
  const id = typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
  res.setHeader(REQUEST_ID_HEADER, id);
  return id;
}

/** Structured JSON logs (pino) with the app name and the request id on every line. */
export function loggerModule(app: string, level: string) {
  return LoggerModule.forRoot({
    pinoHttp: {
      level,
      base: { app },
      genReqId: requestIdOf,
      customAttributeKeys: { reqId: 'requestId' },
      redact: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-meld-principal"]'],
      // Probes and scrapes would drown the log; they stay visible in metrics.
      autoLogging: { ignore: (req) => /^\/(healthz|readyz|livez|metrics)$/.test(req.url ?? '') },
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    },
  });
}
