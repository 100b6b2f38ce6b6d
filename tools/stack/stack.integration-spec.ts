// The local stack against the real services. It brings the shared stack up (or finds it up)
// but never stops it: other engineers and test runs use it. Anything destructive (stale pid
// files, outages) happens on a private Kafka dev broker.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';

interface ServiceStatus {
  service: string;
  state: 'up' | 'down' | 'external';
  pid: number | null;
  url: string | null;
}
interface StackEnv {
  [key: string]: unknown;
  test: Record<string, string>;
}
interface PrivateBroker {
  name: string;
  brokers: string;
  pid: number;
  brokersFile: string;
  logFile: string;
}
interface Stack {
  up(options?: { services?: string[]; log?: (line: string) => void }): Promise<StackEnv>;
  status(): Promise<ServiceStatus[]>;
  readEnv(): StackEnv;
  startBroker(options: { name: string; partitions?: number; topics?: string[] }): Promise<PrivateBroker>;
  stopBroker(name: string): Promise<void>;
}

// Plain CommonJS without type declarations (it must run before `npm install`).
const stack: Stack = require('./index');

// `npm test` points MELD_KAFKA_BROKERS at the tests' private broker, which the stack would
// treat as an external Kafka: this spec is about the stack's own services.
delete process.env.MELD_KAFKA_BROKERS;

const PIDS = path.resolve(__dirname, '../../.stack/pids');
const SERVICES = ['postgres', 'redis', 'clickhouse', 'kafka', 'smsc'];
const quiet = (): void => undefined;

async function eventually(check: () => Promise<void>, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

function client(brokers: string): Kafka {
  return new Kafka({ clientId: 'stack-spec', brokers: [brokers], logLevel: logLevel.NOTHING, connectionTimeout: 1000, retry: { retries: 1 } });
}

async function connectOnce(brokers: string): Promise<void> {
  const admin = client(brokers).admin();
  try {
    await admin.connect();
    await admin.listTopics();
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

describe('local stack', () => {
  it('brings every service up, reports it and writes the env file', async () => {
    const env = await stack.up({ log: quiet });
    const rows = await stack.status();
    expect(rows.map((r) => r.service)).toEqual(SERVICES);
    for (const row of rows) {
      expect({ service: row.service, ok: row.state === 'up' ? row.pid !== null : row.state === 'external' }).toEqual({ service: row.service, ok: true });
    }
    expect(stack.readEnv()).toEqual(env);
    expect(env.test.MELD_POSTGRES_URL).toMatch(/\/meld_test$/);
    expect(env.test.MELD_REDIS_URL).toMatch(/\/1$/);
    expect(env.test.MELD_CLICKHOUSE_DB).toBe('meld_test');
    expect(env.test.MELD_KAFKA_BROKERS).toBe(env.MELD_KAFKA_BROKERS);
  }, 180_000);

  it('a second up is a fast no-op that keeps the same processes', async () => {
    const before = await stack.status();
    const started = Date.now();
    await stack.up({ log: quiet });
    const took = Date.now() - started;
    const after = await stack.status();
    expect(after.map((r) => [r.service, r.pid])).toEqual(before.map((r) => [r.service, r.pid]));
    expect(took).toBeLessThan(3000);
  }, 60_000);
});

describe('meld stack status', () => {
  // Without MELD_* URLs: every service is the stack's own, none external.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MELD_')));
  const status = (root: string) => spawnSync(process.execPath, [path.join(root, 'tools/stack/cli.js'), 'status', '--json'], { encoding: 'utf8', env, timeout: 30_000 });

  it('exits 3 when a service is down, 0 when every one is up, so a script can tell', async () => {
    await stack.up({ log: quiet });
    const up = status(path.resolve(__dirname, '../..'));
    expect([up.status, JSON.parse(up.stdout).map((r: ServiceStatus) => r.state)]).toEqual([0, SERVICES.map(() => 'up')]);
    // The stack's code in a checkout of its own, with no .stack/: none of its services runs.
    const root = fs.mkdtempSync(path.join(fs.realpathSync(os.tmpdir()), 'stack-status-'));
    try {
      fs.cpSync(__dirname, path.join(root, 'tools/stack'), { recursive: true, filter: (file) => !file.endsWith('.ts') });
      const down = status(root);
      expect([down.status, JSON.parse(down.stdout).map((r: ServiceStatus) => r.state)]).toEqual([3, SERVICES.map(() => 'down')]);
      expect(fs.existsSync(path.join(root, '.stack'))).toBe(false);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('private Kafka dev broker', () => {
  const name = `stack-spec-${process.pid}`;
  let broker: PrivateBroker;

  afterAll(() => stack.stopBroker(name));

  it('replaces a stale pid file (process gone, or pid reused by something else)', async () => {
    fs.mkdirSync(PIDS, { recursive: true });
    const gone = spawnSync('true').pid as number; // exited and reaped: a dead pid
    for (const stale of [gone, process.pid]) {
      await stack.stopBroker(name);
      fs.writeFileSync(path.join(PIDS, `${name}.pid`), `${stale}\n`);
      broker = await stack.startBroker({ name, partitions: 3 });
      expect(broker.pid).not.toBe(stale);
      expect(Number(fs.readFileSync(path.join(PIDS, `${name}.pid`), 'utf8'))).toBe(broker.pid);
      expect(fs.readFileSync(broker.brokersFile, 'utf8').trim()).toBe(broker.brokers);
    }
    // Idempotent: asking again reuses the running broker.
    expect((await stack.startBroker({ name, partitions: 3 })).pid).toBe(broker.pid);
  }, 60_000);

  it('pre-creates the contract topics and serves produce and a consumer group', async () => {
    const kafka = client(broker.brokers);
    const admin = kafka.admin();
    await admin.connect();
    const { topics } = await admin.fetchTopicMetadata({ topics: ['meld.events.v1', 'meld.events.v1.dlq'] });
    // Metadata lists topics in no particular order.
    expect(topics.map((t) => [t.name, t.partitions.length]).sort()).toEqual([
      ['meld.events.v1', 3],
      ['meld.events.v1.dlq', 3],
    ]);
    await admin.disconnect();

    const producer = kafka.producer();
    await producer.connect();
    const values = Array.from({ length: 50 }, (_, i) => `event-${i}`);
    await producer.send({ topic: 'meld.events.v1', acks: -1, messages: values.map((value, i) => ({ key: `contact-${i % 7}`, value })) });
    await producer.disconnect();

    const consumer = kafka.consumer({ groupId: `${name}-group` });
    await consumer.connect();
    await consumer.subscribe({ topic: 'meld.events.v1', fromBeginning: true });
    const seen = new Set<string>();
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`consumed ${seen.size} of ${values.length}`)), 30_000);
        consumer
          .run({
            eachMessage: async ({ message }) => {
              seen.add(String(message.value));
              if (seen.size === values.length) {
                clearTimeout(timer);
                resolve();
              }
            },
          })
          .catch(reject);
      });
    } finally {
      await consumer.disconnect();
    }
    expect([...seen].sort()).toEqual([...values].sort());
  }, 60_000);

  it('SIGUSR1 takes the broker down and SIGUSR2 brings it back', async () => {
    await connectOnce(broker.brokers);
    // The mock applies the change on its own thread, up to ~1 s later: poll for it.
    process.kill(broker.pid, 'SIGUSR1');
    await eventually(() => expect(connectOnce(broker.brokers)).rejects.toThrow());
    process.kill(broker.pid, 'SIGUSR2');
    await eventually(() => connectOnce(broker.brokers));
  }, 60_000);
});
