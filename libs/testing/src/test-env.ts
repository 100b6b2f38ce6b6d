/**
 * URLs of the stores the test run uses. `meld test` exports them from the local stack;
 * a developer may point them elsewhere. Refuses database names that do not say "test"
 * so a test can never truncate a real database (PostHog's guard).
 */
export interface TestEnv {
  postgresUrl: string;
  redisUrl: string;
  clickhouseUrl: string;
  clickhouseDatabase: string;
  kafkaBrokers: string[];
  smscUrl: string;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests through \`npm test\` (it starts the local stack and exports it)`);
  return value;
}

function assertTestName(kind: string, name: string): void {
  if (!/test/i.test(name)) throw new Error(`refusing to run tests against ${kind} "${name}": its name must contain "test"`);
}

export function testEnv(): TestEnv {
  const postgresUrl = required('MELD_POSTGRES_URL');
  assertTestName('Postgres database', new URL(postgresUrl).pathname.slice(1));
  const clickhouseDatabase = required('MELD_CLICKHOUSE_DB');
  assertTestName('ClickHouse database', clickhouseDatabase);
  return {
    postgresUrl,
    redisUrl: required('MELD_REDIS_URL'),
    clickhouseUrl: required('MELD_CLICKHOUSE_URL'),
    clickhouseDatabase,
    kafkaBrokers: required('MELD_KAFKA_BROKERS').split(','),
    smscUrl: required('MELD_SMSC_URL'),
  };
}
