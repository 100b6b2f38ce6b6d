import type { ConsumerRunner } from '@meld/kafka';
import { testEnv } from '@meld/testing';
import { Client } from 'pg';
import { BackgroundConsumer } from '../src/consumers/background-consumer';

// A hand-written line about a failed start, given a real Postgres error whose text quotes an
// email: the line names the error by class and code, never its text (ADR 0338).
const EMAIL = `jane-${Date.now()}@example.com`;

describe('a background consumer whose start fails on Postgres', () => {
  const env = testEnv();
  let pg: Client;

  beforeAll(async () => {
    pg = new Client({ connectionString: env.postgresUrl });
    await pg.connect();
  });

  afterAll(() => pg.end());

  it('logs the retry by the error class and SQLSTATE, without the quoted value', async () => {
    const lines: string[] = [];
    const failing = {
      // The failure is the store's own: a uuid cast of an email.
      start: () => pg.query('SELECT $1::uuid', [EMAIL]).then(() => undefined),
      stop: async () => undefined,
      isHealthy: () => false,
    } as unknown as ConsumerRunner;
    const consumer = new BackgroundConsumer({
      name: 'contacts',
      create: () => failing,
      logger: { warn: (line: string) => void lines.push(line) } as never,
      retryMs: 10,
    });
    consumer.start();
    const deadline = Date.now() + 10_000;
    while (lines.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await consumer.stop();

    const refused = (await pg.query('SELECT $1::uuid', [EMAIL]).catch((e: Error) => e)) as Error;
    expect(refused.message).toContain(EMAIL);
    expect(lines[0]).toBe('contacts consumer could not start, retrying: DatabaseError 22P02');
    for (const line of lines) expect(line).not.toContain(EMAIL);
  });
});
