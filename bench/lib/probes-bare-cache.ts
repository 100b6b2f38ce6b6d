/**
 * The floor of a cached coverage answer (ADR 0249): a bare Fastify process (no Nest, no gateway,
 * no principal, no logs) answering the coverage route with the cached answer's JSON read from
 * Redis as stored, so the gateway's cached p99 has the machine's own tail beside it: one HTTP
 * round trip, one Redis GET, the same bytes. Run as its own process
 * (`node -r @swc-node/register bench/lib/probes-bare-cache.ts`) with PORT, MELD_REDIS_URL and
 * BARE_CACHE_KEY set.
 */
import Fastify from 'fastify';
import Redis from 'ioredis';

async function main(): Promise<void> {
  const redis = new Redis(process.env.MELD_REDIS_URL!);
  const key = process.env.BARE_CACHE_KEY!;
  const app = Fastify();
  app.post('/v1/project/:project/audience/coverage', async (_req, reply) => {
    const text = await redis.get(key);
    if (text === null) return reply.code(404).send({ message: 'no cached answer' });
    return reply.type('application/json').send(text);
  });
  app.get('/readyz', async () => ({ status: 'ok' }));
  await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
}

main().catch((e: unknown) => {
  process.stderr.write(`${String(e)}\n`);
  process.exit(1);
});
