import { createServer, type Server } from 'node:http';
import { type Json, seedTenancy } from '@meld/fixtures';
import type { INestApplication } from '@nestjs/common';
import { probeHeaders, startProbes } from './probes.fixture';

/**
 * The probe reads are reads for a request: read-only under max_execution_time and max_memory_usage
 * (ADR 0114), a clear 422 or 503 past them, never an unbounded read or a hung request.
 */
describe('ClickHouse limits of request reads (probes)', () => {
  const apps: INestApplication[] = [];
  let stall: Server;

  beforeAll(async () => {
    // A "ClickHouse" that accepts the request and never answers.
    stall = createServer(() => undefined);
    await new Promise<void>((resolve) => stall.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
    stall.closeAllConnections();
    await new Promise((resolve) => stall.close(resolve));
  });

  async function probes(overrides: Record<string, string>) {
    const started = await startProbes(overrides);
    apps.push(started.app);
    const t = await seedTenancy(started.db, 'limits');
    return async (surface: 'audience/coverage' | 'event/volumes') => {
      const res = await fetch(`${started.base}/v1/project/${t.project.uid}/${surface}`, { method: 'POST', headers: probeHeaders(t, { surface }), body: JSON.stringify({ refresh: true }) });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Json };
    };
  }

  it('answers 422 naming max_memory_usage when a probe read needs more memory than allowed', async () => {
    const probe = await probes({ MELD_CLICKHOUSE_MAX_MEMORY_USAGE: '1000' });
    for (const surface of ['audience/coverage', 'event/volumes'] as const) {
      const res = await probe(surface);
      expect([surface, res.status, res.body.details]).toEqual([surface, 422, { limit: 'max_memory_usage' }]);
    }
  });

  it('documents the 422 and the 503 on both probe routes', async () => {
    const { app, base } = await startProbes();
    apps.push(app);
    const doc: Json = await (await fetch(`${base}/openapi.json`)).json();
    for (const path of ['/v1/project/{project}/audience/coverage', '/v1/project/{project}/event/volumes']) {
      const responses = doc.paths[path].post.responses;
      expect([path, responses['422']?.description, responses['503']?.description]).toEqual([path, expect.stringMatching(/max_memory_usage/), expect.stringMatching(/Retry-After/)]);
    }
  });

  it('answers 503 with Retry-After soon after max_execution_time when the read store does not answer', async () => {
    const probe = await probes({ MELD_CLICKHOUSE_READ_URL: `http://127.0.0.1:${(stall.address() as { port: number }).port}`, MELD_CLICKHOUSE_MAX_EXECUTION_TIME: '1' });
    const started = Date.now();
    const res = await probe('audience/coverage');
    expect(Date.now() - started).toBeLessThan(6000);
    expect([res.status, res.retryAfter, res.body.details]).toEqual([503, '10', { limit: 'max_execution_time' }]);
  });
});
