import 'reflect-metadata';
import type { RequestListener } from 'node:http';
import { type DynamicModule, type INestApplication, type Type } from '@nestjs/common';
import { onRequestPath } from '@meld/db';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { logAccess } from '../logging/access-log';
import { REQUEST_ID_HEADER } from '../logging/logger.module';
import { NestPinoLogger } from '../logging/nest-pino-logger';
import { instrumentFastify, startDefaultMetrics } from '../metrics/metrics';
import { nameSpanAfterRoute, tracedRequestId, tracedServerFactory } from '../tracing/http-server';
import { startTracing } from '../tracing/tracing';
import { useJsonBodyParser } from './json-body';
import { MAX_PATH_PARAM_LENGTH, PUBLIC_MAX_HEADER_BYTES, frameworkErrorReply } from './request-limits';

export interface BootstrapOptions {
  app: string;
  module: Type<unknown> | DynamicModule;
  host: string;
  port: number;
  /** Largest accepted request body; bigger bodies get 413 before any handler runs. */
  bodyLimit?: number;
  /** JSON bodies may come gzip- or deflate-compressed; `bodyLimit` holds before and after inflating (ADR 0012). */
  decodeBodies?: boolean;
  /**
   * Whose `X-Forwarded-For` to believe. Internal apps sit behind the gateway (true); the
   * gateway believes only the proxies named in `MELD_TRUST_PROXY` (IPs/CIDRs), else
   * nobody, so a client cannot pick its own rate-limit bucket by forging the header.
   */
  trustProxy?: boolean | string;
  /** Largest request line plus headers (431 above); default the public one (`maxHeaderBytesFor`, ADR 0012). */
  maxHeaderSize?: number;
  configure?: (app: NestFastifyApplication) => void | Promise<void>;
}

/**
 * How long an idle keep-alive connection stays open: longer than whoever calls an app keeps its
 * own (a cloud load balancer before the gateway 60 s, the gateway's pools 30 s), so the caller
 * closes first and never sends on a connection the app is closing (a 502 there). Node's is 5 s.
 */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** Boots one Meld app on Fastify with pino logs, metrics and graceful shutdown on SIGTERM. */
export async function bootstrapApp(options: BootstrapOptions): Promise<INestApplication> {
  startDefaultMetrics(options.app);
  const stopTracing = startTracing({ service: options.app });
  const bodyLimit = options.bodyLimit ?? 1024 * 1024;
  // The access line of an answer Fastify's router gives itself: no hook runs for it (set once the logger exists).
  const frameworkAnswers: { log?: (request: FastifyRequest, reply: FastifyReply) => void } = {};
  const adapter = new FastifyAdapter({
    bodyLimit,
    trustProxy: options.trustProxy ?? true,
    // After SIGTERM (app.close()) a request arriving on an open keep-alive connection is served,
    // with Connection: close, so its caller reconnects to another pod; Fastify's default answered
    // it a bare 503, which the gateway passed on (its pools keep connections to a pod the Service
    // no longer routes to). Idle connections are closed at once, and no new ones are taken.
    return503OnClosing: false,
    // Fastify matches no route whose path parameter is longer than 100 characters (its default):
    // a 180-character _user_id (the ingest limit), an email search, would be "no such endpoint".
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    // Fastify leaves the server a factory makes as made: its keepAliveTimeout option never reached it.
    serverFactory: (handler: RequestListener) => tracedServerFactory(handler, { maxHeaderSize: options.maxHeaderSize ?? PUBLIC_MAX_HEADER_BYTES, keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS }),
    // A path Fastify's router cannot read answers in the error shape (ADR 0012).
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      frameworkErrorReply(error, request, reply);
      frameworkAnswers.log?.(request, reply);
    },
    genReqId: tracedRequestId,
  });
  const app = await NestFactory.create<NestFastifyApplication>(options.module, adapter, { bufferLogs: true });
  app.useLogger(app.get(NestPinoLogger));
  app.enableShutdownHooks();
  useJsonBodyParser(app, bodyLimit, options.decodeBodies);
  const fastify = app.getHttpAdapter().getInstance();
  // Request hooks take Fastify's callback form: an async hook costs a promise and a microtask
  // per request, in every app (ADR 0270).
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    nameSpanAfterRoute(request.method, request.routeOptions.url);
    done();
  });
  // A route's guards, pipes and handler run as a request path: their Postgres statements wait at
  // most MELD_POSTGRES_REQUEST_TIMEOUT_MS (ADR 0360). preHandler, not onRequest: the body's stream
  // events would run outside the context.
  fastify.addHook('preHandler', (_request, _reply, done) => onRequestPath(done));
  fastify.addHook('onClose', () => stopTracing());
  // Stopping (ADR 0004): Node closes the connections idle when the server starts closing, and one
  // whose answer was in flight then stays open until its caller closes it (the gateway's pools keep
  // theirs up to the 65 s keep-alive, past the pods' terminationGracePeriodSeconds). Each is closed
  // once idle, until the server is.
  fastify.addHook('preClose', (done) => {
    const sweep = setInterval(() => fastify.server.closeIdleConnections(), 100).unref();
    fastify.server.once('close', () => clearInterval(sweep));
    done();
  });
  instrumentFastify(fastify);
  const logger = app.get(NestPinoLogger);
  frameworkAnswers.log = logAccess(fastify, { log: (record, context) => logger.log(record, context), enabled: () => logger.pino.isLevelEnabled('info') });
  await options.configure?.(app);
  await app.listen(options.port, options.host);
  logger.log(`${options.app} listening on http://${options.host}:${options.port}`);
  return app;
}
