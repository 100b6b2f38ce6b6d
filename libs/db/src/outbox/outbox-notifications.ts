import { errorSummary } from '@meld/contracts';
import { Logger } from '@nestjs/common';
import { Client, type ClientConfig } from 'pg';
import type { DataSource } from 'typeorm';

/** The channel the outbox tables' trigger notifies on, with the table's name as payload (ADR 0212). */
export const OUTBOX_CHANNEL = 'meld_outbox';

const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 5000;

type Wake = () => void;

/**
 * One LISTEN connection per process and database (ADR 0212): each committed outbox write, in
 * any process, wakes the pumps of its table here. Opened with the first subscriber, closed with
 * the last. While it is down (Postgres restarting, a dropped socket) the pumps run on their
 * safety poll; on every (re)connect they are all woken, as notifications sent meanwhile are lost.
 */
export class OutboxNotifications {
  private readonly log = new Logger('outbox:listen');
  private readonly subscribers = new Map<string, Set<Wake>>();
  private loop?: Promise<void>;
  private stopped = false;
  private up = false;
  /** Ends the current wait: on the open connection, or before the next attempt. */
  private interrupt?: () => void;

  constructor(private readonly config: () => ClientConfig) {}

  /** Calls `wake` after every committed write to `table`; returns what unsubscribes. */
  subscribe(table: string, wake: Wake): () => Promise<void> {
    let set = this.subscribers.get(table);
    if (!set) this.subscribers.set(table, (set = new Set()));
    set.add(wake);
    this.stopped = false;
    this.loop ??= this.run();
    return async () => {
      set.delete(wake);
      if (set.size === 0) this.subscribers.delete(table);
      if (this.subscribers.size === 0) await this.stop();
    };
  }

  /** True while the LISTEN connection is up (the `meld_outbox_listening` gauge). */
  get listening(): boolean {
    return this.up;
  }

  private async stop(): Promise<void> {
    this.stopped = true;
    this.interrupt?.();
    await this.loop;
    this.loop = undefined;
  }

  private async run(): Promise<void> {
    for (let attempt = 0; !this.stopped; attempt++) {
      const client = new Client({ ...this.config(), keepAlive: true });
      const ended = new Promise<void>((resolve) => {
        client.once('end', resolve);
        client.on('error', (err) => {
          this.log.warn(`listen connection failed: ${errorSummary(err)}`);
          resolve();
        });
      });
      client.on('notification', (n) => this.dispatch(n.payload));
      try {
        await client.connect();
        await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
        if (attempt > 0) this.log.log('listen connection restored');
        attempt = 0;
        this.up = true;
        this.wakeAll();
        if (!this.stopped) await Promise.race([ended, this.interruptible()]);
      } catch (err) {
        if (!this.stopped) this.log.warn(`listen connection failed, pumps on their safety poll: ${errorSummary(err)}`);
      }
      this.up = false;
      await client.end().catch(() => undefined);
      if (!this.stopped) await Promise.race([sleep(Math.min(RECONNECT_MIN_MS * 2 ** attempt, RECONNECT_MAX_MS)), this.interruptible()]);
    }
    this.interrupt = undefined;
  }

  private interruptible(): Promise<void> {
    return new Promise((resolve) => (this.interrupt = resolve));
  }

  private dispatch(table: string | undefined): void {
    const set = table === undefined ? undefined : this.subscribers.get(table);
    if (set) for (const wake of set) wake();
  }

  private wakeAll(): void {
    for (const set of this.subscribers.values()) for (const wake of set) wake();
  }
}

const byDataSource = new WeakMap<DataSource, OutboxNotifications>();

/** The process's listener on the database of `ds`, on a connection of its own beside the pool. */
export function outboxNotificationsOf(ds: DataSource): OutboxNotifications {
  let n = byDataSource.get(ds);
  if (!n) {
    n = new OutboxNotifications(() => listenConfig(ds.options as PostgresOptions));
    byDataSource.set(ds, n);
  }
  return n;
}

/** What createDataSource sets (typeorm's own type is not exported from its package root). */
interface PostgresOptions {
  url?: string;
  extra?: { application_name?: string; connectionTimeoutMillis?: number };
}

function listenConfig(o: PostgresOptions): ClientConfig {
  const name = o.extra?.application_name ?? 'meld';
  return { connectionString: o.url, application_name: `${name}-listen`, connectionTimeoutMillis: o.extra?.connectionTimeoutMillis ?? 5000 };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
