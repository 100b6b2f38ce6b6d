import { randomBytes } from 'node:crypto';
import { testEnv, waitFor } from '@meld/testing';
import { Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { createDataSource, OutboxRelay, outboxNotificationsOf, type OutboxMessage, type OutboxProducer } from '../src';

const SAFETY_POLL_MS = 2000;

// A relay woken by LISTEN/NOTIFY (ADR 0212) on an outbox of a schema of its own, with the
// migration's trigger function; writes come from a second DataSource, as from another process.
// The table's name is this run's own too: a pump's advisory lock is keyed by its table's name, so
// one named `outbox` shared it with ingest's pumps in other specs, and a pass that found it held
// published nothing until the safety poll.
describe('OutboxRelay', () => {
  const schema = `relay_${randomBytes(4).toString('hex')}`;
  const table = `outbox_${randomBytes(4).toString('hex')}`;
  const app = `outbox-relay-spec-${randomBytes(3).toString('hex')}`;
  let ds: DataSource;
  let writer: DataSource;
  let relay: OutboxRelay;
  const metrics = new Registry();
  const listeningMetric = async () => (await metrics.getSingleMetric('meld_outbox_listening')!.get()).values[0]?.value;
  const sent: Array<{ at: number; messages: OutboxMessage[] }> = [];
  const producer: OutboxProducer = { send: async (_topic, messages) => void sent.push({ at: Date.now(), messages: [...messages] }) };

  const open = (name: string) => {
    const url = new URL(testEnv().postgresUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    return createDataSource({ url: url.toString(), applicationName: name }).initialize();
  };
  /** Commits one row without nudging anyone; resolves with the time of the commit. */
  const write = async (key: string) => {
    await writer.query(`INSERT INTO ${table} (topic, key, value) VALUES ('t', $1, '{}')`, [key]);
    return Date.now();
  };
  const sentAfter = (key: string) => waitFor(`${key} sent`, async () => sent.find((s) => s.messages.some((m) => m.key === key)), { timeoutMs: 10000, intervalMs: 5 });
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /**
   * Resolves when the relay's next pass has ended (a pass is the only user of a query runner of
   * `ds`): an idle pump then sleeps a whole safety poll, so a row written at once and published
   * within half of one was published because its NOTIFY woke the pump, however loaded the machine.
   */
  const passEnded = () => new Promise<void>((resolve) => passEndWaiters.push(resolve));
  const passEndWaiters: Array<() => void> = [];

  beforeAll(async () => {
    ds = await open(app);
    const createQueryRunner = ds.createQueryRunner.bind(ds);
    jest.spyOn(ds, 'createQueryRunner').mockImplementation((...args) => {
      const qr = createQueryRunner(...args);
      const release = qr.release.bind(qr);
      qr.release = async () => {
        await release();
        passEndWaiters.splice(0).forEach((resolve) => resolve());
      };
      return qr;
    });
    writer = await open(`${app}-writer`);
    await ds.query(`CREATE SCHEMA ${schema}`);
    await ds.query(`CREATE TABLE ${table} (id bigserial PRIMARY KEY, topic text NOT NULL, key text NOT NULL, value jsonb NOT NULL, trace jsonb, created_at timestamptz NOT NULL DEFAULT now())`);
    await ds.query(`CREATE TRIGGER outbox_notify AFTER INSERT ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION public.meld_outbox_notify()`);
    await ds.query(`CREATE TABLE outbox_dead_letters (LIKE public.outbox_dead_letters INCLUDING ALL)`);
    relay = new OutboxRelay(ds, producer, { table, metrics, safetyPollMs: SAFETY_POLL_MS });
    relay.onApplicationBootstrap();
    await waitFor('the LISTEN connection', async () => outboxNotificationsOf(ds).listening);
  });
  afterAll(async () => {
    await relay?.beforeApplicationShutdown();
    await ds?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await writer?.destroy();
    await ds?.destroy();
  });

  it('the migrations give each outbox table its notify trigger', async () => {
    const rows: Array<{ table: string }> = await ds.query(
      `SELECT c.relname AS table FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND t.tgname = c.relname || '_notify' ORDER BY 1`,
    );
    expect(rows.map((r) => r.table)).toEqual(['audience_outbox', 'outbox', 'sms_outbox', 'sms_webhook_outbox']);
  });

  it('publishes the first write after more than a safety poll of idle long before the next poll, woken by its NOTIFY', async () => {
    await pause(SAFETY_POLL_MS);
    await passEnded();
    const committed = await write('after-idle');
    const { at } = await sentAfter('after-idle');
    expect(at - committed).toBeLessThan(SAFETY_POLL_MS / 2);
  });

  it('reconnects a dropped LISTEN connection and is woken again; rows written meanwhile are not left behind', async () => {
    await ds.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, [`${app}-listen`]);
    await waitFor('the LISTEN connection dropped', async () => !outboxNotificationsOf(ds).listening, { timeoutMs: 5000, intervalMs: 5 });
    expect(await listeningMetric()).toBe(0);
    await write('while-down');
    await sentAfter('while-down'); // on reconnect (every pump is woken) or the safety poll
    await waitFor('the LISTEN connection back', async () => outboxNotificationsOf(ds).listening);
    expect(await listeningMetric()).toBe(1);
    await pause(SAFETY_POLL_MS);
    await passEnded();
    const committed = await write('after-reconnect');
    const { at } = await sentAfter('after-reconnect');
    expect(at - committed).toBeLessThan(SAFETY_POLL_MS / 2);
  });
});
