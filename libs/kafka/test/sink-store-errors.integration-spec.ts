import { Registry } from 'prom-client';
import { z } from 'zod';
import { createClickHouse, ident, sql, type ClickHouse } from '@meld/clickhouse';
import { testEnv } from '@meld/testing';
import { createSinkRunner, DlqHeaders, headerString, sinkHandler, type Logger } from '../src';
import { collect, freshTopic, runnerTestHooks, testBrokers, uniqueId, waitFor } from './kafka-test-env';

// A sink whose store refuses its rows, on the real broker and the real ClickHouse (18.16 in the
// local stack): ClickHouse's error quotes the rest of the row it could not parse, and neither the
// log lines nor the dead letter's reason may carry it (ADR 0338).
const brokers = testBrokers();
const EMAIL = `jane-${uniqueId()}@example.com`;
const TEXT = `your code is ${uniqueId()}`;
const Contact = z.object({ userId: z.string(), note: z.string() });

describe('a sink whose ClickHouse write fails', () => {
  const { producer, runners, readers } = runnerTestHooks(brokers);
  const env = testEnv();
  const table = `sink_errors_${uniqueId()}`;
  let ch: ClickHouse;

  beforeAll(async () => {
    ch = createClickHouse({ url: env.clickhouseUrl, database: env.clickhouseDatabase });
    await ch.ensureDatabase();
    // `n` is a number: a user id written there is a row ClickHouse cannot parse, on every attempt.
    await ch.command(sql`CREATE TABLE ${ident(table)} (user_id String, n UInt32, note String) ENGINE = Memory`);
  });

  afterAll(async () => {
    await ch.command(sql`DROP TABLE IF EXISTS ${ident(table)}`);
    await ch.close();
  });

  it('logs and dead-letters the ClickHouse error by its code, without the row it quotes', async () => {
    const lines: string[] = [];
    const capture = (level: string) => (obj: object, msg?: string) => void lines.push(`${level} ${msg ?? ''} ${JSON.stringify(obj)}`);
    const logger: Logger = { debug: capture('debug'), info: capture('info'), warn: capture('warn'), error: capture('error') };
    const topic = await freshTopic(brokers, 'sink-ch-error');
    const dlq = await collect(brokers, `${topic}.dlq`);
    readers.push(dlq.stop);
    const runner = createSinkRunner({
      brokers,
      clientId: 'test-sink',
      groupId: `test-sink-${uniqueId()}`,
      sink: sinkHandler({ topic, schema: Contact, toRow: (c) => ({ user_id: 'u', n: c.userId, note: c.note }), write: (rows) => ch.insert(table, rows) }),
      metrics: new Registry(),
      backoff: { maxAttempts: 2, initialDelayMs: 5, maxDelayMs: 20 },
      lingerMs: 20,
      logger,
    });
    runners.push(runner);
    await runner.start();
    await producer.send(topic, [{ key: 'k', value: { userId: EMAIL, note: TEXT } }]);
    await waitFor(() => dlq.messages.length === 1, 30_000, 'the dead letter');
    await waitFor(() => lines.some((l) => l.includes('messages dead-lettered')), 10_000, 'the dead-letter line');

    // The server's text did quote the row: what the line would have carried.
    const refused = await ch.insert(table, [{ user_id: 'u', n: EMAIL, note: TEXT }]).catch((e: Error) => e);
    expect((refused as Error).message).toContain(EMAIL);

    const reason = headerString(dlq.messages[0]!.headers, DlqHeaders.error) ?? '';
    expect(reason).toMatch(/^Error: ClickHouse error \d+ /);
    const retried = lines.find((l) => l.includes('sink write failed, retrying'));
    expect(retried).toMatch(/ClickHouse error \d+/);
    const leaks = [...lines, reason].filter((l) => l.includes(EMAIL) || l.includes(TEXT));
    expect(leaks).toEqual([]);
  }, 60_000);
});
