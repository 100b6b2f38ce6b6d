/**
 * request-context bench's server: one Fastify route with a few awaits, booted `plain` (Fastify
 * alone) or `traced` (the request-context plumbing every app boots with: the traced server
 * factory, the request id it takes, the span naming hook and `startTracing`, which with
 * OTEL_EXPORTER_OTLP_ENDPOINT unset only installs the context manager). PORT and MODE from env.
 */
import Fastify from 'fastify';
import { activeRequestId } from '../../libs/contracts/src';
import { nameSpanAfterRoute, tracedRequestId, tracedServerFactory } from '../../libs/platform/src/tracing/http-server';
import { startTracing } from '../../libs/platform/src/tracing/tracing';

const traced = process.env.MODE === 'traced';
if (traced) startTracing({ service: 'bench' });
const app = traced ? Fastify({ serverFactory: tracedServerFactory, genReqId: tracedRequestId }) : Fastify();
if (traced) app.addHook('onRequest', async (request) => nameSpanAfterRoute(request.method, request.routeOptions.url));
app.get('/x', async (request) => {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
  return { id: request.id, seen: traced ? activeRequestId() === request.id : true };
});
app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' }).catch((err: unknown) => {
  process.stderr.write(`request-context-server: ${String(err)}\n`);
  process.exit(1);
});
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
