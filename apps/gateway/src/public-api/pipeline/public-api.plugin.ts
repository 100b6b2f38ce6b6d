import { PUBLIC_ROUTES, type PublicRoute } from '@meld/contracts';
import { answerFrameworkErrors, errorBody } from '@meld/platform';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { takeBodiesUnparsed } from '../proxy/unparsed-bodies';
import { NOT_FOUND_ROUTE, type PublicApi, UNREADABLE_PATH_ROUTE } from './public-api';

/**
 * Registers the route table on the gateway's Fastify instance, in its own encapsulated
 * context: plain Fastify routes (no Nest guards, pipes or interceptors on the hot path),
 * and a catch-all body "parser" that hands the raw request stream to the forwarder, so
 * bodies are streamed through and never parsed here. Static routes the gateway serves
 * itself under /v1 (e.g. /v1/openapi.json) win over the `/v1/*` catch-all in find-my-way.
 */
export function publicApiPlugin(api: PublicApi, routes: readonly PublicRoute[] = PUBLIC_ROUTES) {
  return async function publicApi(app: FastifyInstance): Promise<void> {
    takeBodiesUnparsed(app);
    app.setErrorHandler((err: FastifyError, _request, reply) => {
      const status = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
      return reply.code(status).type('application/json; charset=utf-8').send(errorBody(status, status === 500 ? 'internal error' : err.message));
    });
    const handler = (route: PublicRoute) => (request: FastifyRequest, reply: FastifyReply) => api.handle(route, request, reply);
    for (const route of routes) {
      app.route({ method: route.method, url: route.path, handler: handler(route) });
      // `GET /v1/` is also answered without its trailing slash.
      if (route.path === '/v1/') app.route({ method: route.method, url: '/v1', handler: handler(route) });
    }
    const bare = routes.filter((r) => r.path === '/v1/').map((r) => r.method as string);
    const others = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].filter((m) => !bare.includes(m));
    app.route({ method: others, url: '/v1', handler: handler(NOT_FOUND_ROUTE) });
    app.all('/v1/*', handler(NOT_FOUND_ROUTE));
  };
}

/**
 * A path under /v1 that Fastify's router cannot read (`%ZZ`, a parameter over its length) is
 * answered through the pipeline: counted against the caller's rate limit and carrying
 * X-RateLimit-* as every other answer (ADR 0011), then refused as bootstrapApp refuses it.
 * Other paths keep that refusal. `fastify`: the root instance, whose router raises them.
 */
export function answerUnreadablePaths(fastify: FastifyInstance, api: PublicApi): void {
  answerFrameworkErrors(fastify, (request, reply, message) => {
    if (!/^\/v1(?:[/?]|$)/.test(request.url)) return false;
    void api.handle(UNREADABLE_PATH_ROUTE, request, reply, { status: reply.statusCode, message });
    return true;
  });
}
