import { Client } from 'pg';
import { Registry } from 'prom-client';
import { testEnv } from '@meld/testing';
import { createRunnerCore, type RunnerCore } from '../src/runner-core';
import { captureLogger, freshTopic, rawSend, testBrokers, uniqueId, waitFor } from './kafka-test-env';

// A consumer crashed by a store's error, on the real broker and the real Postgres: the error's
// text quotes the value it could not cast, and kafkajs copies that text into its own lines
// (`Crash: DatabaseError: invalid input …`, the Error itself, its stack). Neither kafkajs's lines
// nor the runner's `kafka consumer crashed` may carry it (ADR 0338).
const brokers = testBrokers();
const EMAIL = `jane-${uniqueId()}@example.com`;

describe('a kafka consumer crashed by a Postgres error quoting an email', () => {
  const env = testEnv();
  let pg: Client;
  let core: RunnerCore | undefined;

  beforeAll(async () => {
    pg = new Client({ connectionString: env.postgresUrl });
    await pg.connect();
  });

  afterAll(async () => {
    await core?.stop().catch(() => undefined);
    await pg.end();
  });

  it('logs the error by class and code, in kafkajs lines and its own', async () => {
    const { logger, lines } = captureLogger();
    const topic = await freshTopic(brokers, 'crash-log');
    await rawSend(brokers, topic, [{ key: 'k', value: '{}' }]);

    // What a handler meets: the driver's text quotes the value.
    const refused = (await pg.query('SELECT $1::uuid', [EMAIL]).catch((e: Error) => e)) as Error & { code?: string };
    expect(refused.message).toContain(EMAIL);
    expect(refused.code).toBe('22P02');

    core = createRunnerCore({ brokers, clientId: 'test-crash', groupId: `test-crash-${uniqueId()}`, logger, metrics: new Registry(), kafkaLogLevel: 'warn' });
    await core.start([topic], [], {
      eachBatch: async () => {
        throw refused;
      },
    });
    await waitFor(() => lines.some((l) => l.includes('kafka consumer crashed')), 30_000, 'the crash line');
    await waitFor(() => lines.some((l) => l.includes('Crash')), 10_000, "kafkajs's crash line");

    // kafkajs wraps the handler's error once its retries run out: the line names both.
    expect(lines.find((l) => l.includes('kafka consumer crashed'))).toContain('"cause":"DatabaseError 22P02"');
    expect(lines.find((l) => l.includes('Error when calling eachBatch'))).toContain('DatabaseError 22P02');
    for (const line of lines) expect(line).not.toContain(EMAIL);
  });
});
