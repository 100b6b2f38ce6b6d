import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { Pool } from 'undici';
import { freePort, startScript, stopApp, waitReady } from './apps';
import { bareSmsTable } from './bare-sms';
import { CpuMeter } from './cpu';
import { closedLoopOver } from './load';
import type { BenchPostgres } from './postgres-db';
import { rate } from './stats';
import { WebhookReceiver } from './webhook-receiver';

export interface FloorOptions {
  root: string;
  db: BenchPostgres['db'];
  postgresUrl: string;
  postgresPids: () => Promise<number[]>;
  redisUrl: string;
  redisPid?: number;
  smscPort: number;
  messages: number;
  connections: number;
  warmUp: number;
  /** As Meld's --enqueue-only: `api` alone during the peak, then a `delivery` process drains the backlog. */
  enqueueOnly: boolean;
  /** As Meld's default shape (ADR 0326): an `api` process behind the proxy and a `delivery` process, both from the start. */
  split: boolean;
  log(message: string): void;
}

export interface FloorResult {
  enqueued: number;
  latencies: number[];
  /** Receipts processed per second, first request to last `delivered` (the peak's messages). */
  delivered: number;
  /** With enqueueOnly: the backlog's first `sent` to its last `delivered`. */
  drained?: number;
  /** µs per message over the peak, by process (first request to last delivered webhook, or to the last 201 with enqueueOnly). */
  cpu: Record<string, number>;
  lost: number;
  /** Webhook reports received by status, warm-up included: `sent` and `delivered` per message, no `enqueued` (ADR 0351). */
  reports: Record<string, number>;
}

/**
 * The floor of ADR 0320, measured in the sms bench's own run: bench/lib/bare-sms.ts behind the
 * gateway bench's bare proxy (bench/lib/bare-proxy.ts, ADR 0271), the same SMSC simulator,
 * Postgres server and Redis, the same number of messages, connections and warm-up as Meld's
 * peak. Its webhooks go to a receiver of their own.
 */
export async function measureFloor(o: FloorOptions): Promise<FloorResult> {
  // A second measurement in the same run (--floor-after) starts from an empty table, as the first did.
  await o.db.query('DROP TABLE IF EXISTS bare_sms');
  await o.db.query(bareSmsTable);
  const queueName = `bench-sms-floor-${randomBytes(4).toString('hex')}`;
  const receiver = new WebhookReceiver();
  const webhookUrl = await receiver.start();
  const children: ChildProcess[] = [];
  const spawnTs = (file: string, env: Record<string, string>) => {
    const child = startScript(o.root, file, { ...process.env, ...env });
    children.push(child);
    return child;
  };
  const floorEnv = (role: string, port: number) => ({
    PORT: String(port), BARE_ROLE: role, MELD_POSTGRES_URL: o.postgresUrl, MELD_REDIS_URL: o.redisUrl, BARE_QUEUE: queueName,
    BARE_SMSC_PORT: String(o.smscPort), BARE_WEBHOOK_URL: webhookUrl, BARE_WEBHOOK_SECRET: randomBytes(24).toString('base64'),
  });
  try {
    const [appPort, proxyPort] = [await freePort(), await freePort()];
    const app = spawnTs('bench/lib/bare-sms.ts', floorEnv(o.enqueueOnly || o.split ? 'api' : 'all', appPort));
    const deliveryPort = o.split ? await freePort() : 0;
    const delivery = o.split ? spawnTs('bench/lib/bare-sms.ts', floorEnv('delivery', deliveryPort)) : undefined;
    const proxy = spawnTs('bench/lib/bare-proxy.ts', { PORT: String(proxyPort), BARE_PROXY_UPSTREAM: `http://127.0.0.1:${appPort}` });
    await waitReady(`http://127.0.0.1:${appPort}/readyz`);
    if (delivery) await waitReady(`http://127.0.0.1:${deliveryPort}/readyz`);
    // Through the proxy too: it starts on its own, and a busy machine (after Meld's peak) can leave it a moment behind.
    await waitReady(`http://127.0.0.1:${proxyPort}/readyz`);
    const pool = new Pool(`http://127.0.0.1:${proxyPort}`, { connections: o.connections, keepAliveTimeout: 30_000 });
    const ids: string[] = [];
    let next = 0;
    const send = async () => {
      const i = next++;
      const res = await pool.request({
        method: 'POST',
        path: `/sms/${encodeURIComponent(`+4474${String(i * 10 + 1).padStart(8, '0')}`)}`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'Your code is 4821' }),
      });
      const body = (await res.body.json()) as { entity?: { id: string } };
      if (res.statusCode !== 201 || !body.entity) return false;
      ids.push(body.entity.id);
      return true;
    };
    if (o.warmUp > 0) {
      o.log(`floor warm-up: ${o.warmUp} sends, not metered`);
      const warm = await closedLoopOver(o.connections, o.warmUp, () => send());
      if (warm.errors) throw new Error(`floor warm-up: ${warm.errors} sends failed`);
      if (!o.enqueueOnly && (await receiver.settle(ids, 120_000))) throw new Error('floor warm-up: messages not delivered');
    }
    const warmIds = ids.splice(0);
    o.log(`floor peak: ${o.messages} sends from ${o.connections} connections`);
    const meter = await new CpuMeter([
      { name: 'floor', pid: app.pid! },
      ...(delivery ? [{ name: 'floor-delivery', pid: delivery.pid! }] : []),
      { name: 'proxy', pid: proxy.pid! },
      { name: 'postgres', pids: o.postgresPids },
      ...(o.redisPid ? [{ name: 'redis', pid: o.redisPid }] : []),
    ]).start();
    const peak = await closedLoopOver(o.connections, o.messages, () => send());
    const peakIds = [...ids];
    let cpu: Record<string, number> | undefined;
    if (o.enqueueOnly) {
      cpu = await meter.stop();
      spawnTs('bench/lib/bare-sms.ts', floorEnv('delivery', await freePort()));
    }
    const lost = (await receiver.settle(peakIds, 120_000)) + (o.enqueueOnly ? await receiver.settle(warmIds, 60_000) : 0) + peak.errors;
    cpu ??= await meter.stop();
    await pool.close();
    const timesOf = async (which: string[]) =>
      (
        await o.db.query(
          `SELECT count(delivered_at)::int AS n, extract(epoch FROM max(delivered_at) - min(created_at)) * 1000 AS "fromRequestMs",
                  extract(epoch FROM max(delivered_at) - min(sent_at)) * 1000 AS "fromSentMs"
             FROM bare_sms WHERE id = ANY($1::uuid[])`,
          [which],
        )
      )[0] as { n: number; fromRequestMs: string; fromSentMs: string };
    const peakTimes = await timesOf(peakIds);
    const backlog = o.enqueueOnly ? await timesOf([...warmIds, ...peakIds]) : undefined;
    return {
      enqueued: rate(o.messages, peak.elapsedS * 1000),
      latencies: peak.latencies,
      delivered: rate(peakTimes.n, Number(peakTimes.fromRequestMs)),
      ...(backlog ? { drained: rate(backlog.n, Number(backlog.fromSentMs)) } : {}),
      cpu: Object.fromEntries(Object.entries(cpu).map(([name, us]) => [name, us / o.messages])),
      lost,
      reports: Object.fromEntries(receiver.byStatus),
    };
  } finally {
    await Promise.all(children.map((c) => stopApp(c)));
    await receiver.stop();
    const redis = new Redis(o.redisUrl, { maxRetriesPerRequest: null });
    const queue = new Queue(queueName, { connection: redis });
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    redis.disconnect();
  }
}

/** Two floors of one run as one: the mean of each rate and each process's CPU per message, losses and reports added. */
export function meanFloor(a: FloorResult, b: FloorResult): FloorResult {
  const mean = (x: number, y: number) => (x + y) / 2;
  const cpu = new Map<string, number>();
  for (const name of new Set([...Object.keys(a.cpu), ...Object.keys(b.cpu)])) cpu.set(name, mean(a.cpu[name] ?? 0, b.cpu[name] ?? 0));
  const reports = new Map<string, number>();
  for (const status of new Set([...Object.keys(a.reports), ...Object.keys(b.reports)])) reports.set(status, (a.reports[status] ?? 0) + (b.reports[status] ?? 0));
  return {
    enqueued: mean(a.enqueued, b.enqueued),
    latencies: [...a.latencies, ...b.latencies],
    delivered: mean(a.delivered, b.delivered),
    ...(a.drained !== undefined && b.drained !== undefined ? { drained: mean(a.drained, b.drained) } : {}),
    cpu: Object.fromEntries(cpu),
    lost: a.lost + b.lost,
    reports: Object.fromEntries(reports),
  };
}
