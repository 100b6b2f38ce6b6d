import { createServer, type Server } from 'node:http';
import type { ClickHouse } from '@meld/clickhouse';
import { type Json, principalHeader, seedTenancy, startAppUnderTest } from '@meld/fixtures';
import { CLICKHOUSE_READER } from '@meld/platform';
import { migratedTestClickHouse } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import { appDefinition } from '../src/app.definition';

/**
 * Reads for a request run read-only under max_execution_time and max_memory_usage (ADR 0114),
 * on the real ClickHouse with deliberately tiny limits: a clear 422 or 503, never a hung
 * request or a 500.
 */
describe('ClickHouse limits of request reads (audience)', () => {
  const apps: INestApplication[] = [];
  let stall: Server;
  let ch: ClickHouse;

  beforeAll(async () => {
    ch = await migratedTestClickHouse();
    // A "ClickHouse" that accepts the request and never answers.
    stall = createServer(() => undefined);
    await new Promise<void>((resolve) => stall.listen(0, '127.0.0.1', resolve));
  }, 60000);

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
    stall.closeAllConnections();
    await new Promise((resolve) => stall.close(resolve));
    await ch.close();
  });

  async function audience(overrides: Record<string, string>) {
    const started = await startAppUnderTest(appDefinition, overrides);
    apps.push(started.app);
    const tenancy = await seedTenancy(started.db, 'limits');
    const count = async () => {
      const url = `/v1/project/${tenancy.project.uid}/audience/count`;
      const res = await fetch(`${started.base}${url}`, {
        method: 'POST',
        headers: { ...principalHeader(tenancy, { scopes: ['PROJECT_AUDIENCE_READ'] }, { app: 'audience', method: 'POST', url }), 'content-type': 'application/json' },
        body: JSON.stringify({ root: { type: 'attribute_condition', key: 'loyalty_tier', operator: 'matches-string', values: ['gold'] } }),
      });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Json };
    };
    return { app: started.app, count };
  }

  it('counts within the default limits', async () => {
    const { count } = await audience({});
    expect((await count()).status).toBe(200);
  });

  it('answers 422 naming max_memory_usage when a count needs more memory than allowed', async () => {
    const { count } = await audience({ MELD_CLICKHOUSE_MAX_MEMORY_USAGE: '1000' });
    const res = await count();
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ statusCode: 422, details: { limit: 'max_memory_usage' } });
    expect(res.body.message).toMatch(/^the filter is too expensive: .*max_memory_usage \(MELD_CLICKHOUSE_MAX_MEMORY_USAGE\)/);
  });

  it('answers 503 with Retry-After soon after max_execution_time when ClickHouse does not answer', async () => {
    const { count } = await audience({ MELD_CLICKHOUSE_READ_URL: `http://127.0.0.1:${(stall.address() as { port: number }).port}`, MELD_CLICKHOUSE_MAX_EXECUTION_TIME: '1' });
    const started = Date.now();
    const res = await count();
    expect(Date.now() - started).toBeLessThan(6000);
    expect(res.status).toBe(503);
    expect(res.retryAfter).toBe('10');
    expect(res.body).toMatchObject({ statusCode: 503, details: { limit: 'max_execution_time' } });
    expect(res.body.message).toMatch(/^the store timed out: .*max_execution_time/);
  });

  it('reads as a read-only client: a write through it is refused by ClickHouse', async () => {
    const { app } = await audience({});
    const reader = app.get<ClickHouse>(CLICKHOUSE_READER);
    await expect(reader.command('CREATE TABLE limits_spec_write (a UInt8) ENGINE = Memory')).rejects.toThrow(/readonly/i);
  });
});
