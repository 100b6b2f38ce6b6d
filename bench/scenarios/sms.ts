/**
 * sms: direct SMS end to end. `POST …/channel/sms/sms/direct/default/{contact}` through the
 * gateway (enqueued/s), the messaging app's BullMQ worker submitting over its SMPP session to
 * the SMSC simulator (submitted/s), the receipts processed (delivered/s) and the
 * delivery-report webhooks received (deliveries/s), then an open loop at half of the peak
 * delivered rate whose p99 runs from the request to the `delivered` webhook. Baselines in the
 * same run, on the same box: a bare BullMQ add/process loop, a bare `smpp` submit loop against
 * the same simulator, and the floor (ADR 0320): a bare durable SMS path behind a bare proxy
 * (bench/lib/bare-sms.ts) through the same peak, to which Meld's rates are compared. Every
 * message must end `delivered` with its webhook: a missing one is reported as lost.
 *
 * The bench starts its own gateway and messaging processes from the built apps
 * (`npm run build`), a private Kafka broker, the SMSC simulator and a webhook receiver in
 * this process, on a Postgres database of its own (dropped at the end). MELD_REDIS_URL must
 * name a Redis database no other messaging app uses (the queue names are fixed).
 *
 * Options: --messages N (2000), --connections C (32), --half-seconds S (10), --receipt-delay-ms (100),
 * --direct 1 (POST straight to the messaging app with a principal signed here, as the gateway
 * signs it: the gateway's share of the request cost is the difference between the two runs),
 * --profile DIR (V8 CPU profiles of the messaging processes and the gateway, `messaging*.cpuprofile`, `gateway.cpuprofile`),
 * --split 0|1 (default 1: two messaging processes, as Kubernetes runs them, MELD_MESSAGING_ROLE
 * `api` behind the gateway and `delivery`, ADR 0253, and the floor in the same two roles, ADR 0326;
 * 0: one process with every role, as `npm start` runs it),
 * --pg-statements 1 (Postgres's cost per message by statement over the peak, from
 * pg_stat_statements, with the row changes per table: ADR 0274; the server must preload it,
 * `MELD_STACK_PG_STAT_STATEMENTS=1`),
 * --enqueue-only 1 (the enqueue path alone, ADR 0278: messaging runs as `api` during the peak,
 * so nothing is submitted while the requests run; the CPU is metered from the first request to
 * the last 201 with the outbox relayed, then a `delivery` process starts and drains the backlog:
 * its submitted and delivered rows measure delivery alone, and nothing may be lost),
 * --warm-up N (0: N sends through the same path after the baselines and before the peak, not
 * metered, so the figures are those of warm processes and not of V8 compiling their code: ADR 0310;
 * with --enqueue-only the delivery role drains them with the peak's messages),
 * --no-floor (skips the floor's measurement),
 * --floor-after (measures the floor again right after Meld's peak; the Meld / floor ratios use the
 * mean of both, so the machine's drift over the run biases them less: for A/B comparisons, ADR 0320).
 * The notes give the CPU time each Meld process and Redis used per message over the peak (from
 * the first request to the last delivered webhook; with --enqueue-only, to the last 201).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import Redis from 'ioredis';
import { Pool } from 'undici';
import { encodePrincipal, generatePrincipalKeys, parsePrincipalKey, principalKeyEnv } from '../../libs/auth/src';
import { Topics } from '../../libs/contracts/src';
import { freePort, startApp, stopApp, waitReady } from '../lib/apps';
import { CpuMeter, processCpuUs } from '../lib/cpu';
import type { BenchContext, BenchRow, ScenarioResult } from '../lib/context';
import { closedLoopOver, openLoop } from '../lib/load';
import { startPrivateKafka } from '../lib/private-kafka';
import { PgStatements, statementNotes, tableChanges } from '../lib/pg-statements';
import { benchPostgres } from '../lib/postgres-db';
import { percentile, rate } from '../lib/stats';
import { measureFloor, meanFloor } from '../lib/sms-floor';
import { createBenchTenant } from '../lib/tenant';
import { WebhookReceiver } from '../lib/webhook-receiver';

const smpp = require('smpp');
/** apps/messaging's send queue (ADR 0153): its name is fixed, per Redis database. */
const SEND_QUEUE = 'meld-sms-send';
const { startSmsc } = require(join(__dirname, '../../tools/smsc/simulator'));

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
const reportCounts = (byStatus: ReadonlyMap<string, number>) => [...byStatus].map(([status, n]) => `${status} ${n}`).join(', ') || 'none';
const row = (name: string, throughput: number, latencies: number[] = [], baseline?: string): BenchRow => ({
  name,
  throughput,
  p50Ms: latencies.length ? percentile(latencies, 50) : Number.NaN,
  p99Ms: latencies.length ? percentile(latencies, 99) : Number.NaN,
  peakRssMb: {},
  runs: 1,
  ...(baseline ? { baseline } : {}),
});

/** A bare BullMQ queue: `n` adds from `workers` callers, a worker of concurrency 50 doing nothing. */
async function bareBullmq(redisUrl: string, n: number, workers: number, suffix: string) {
  const connection = () => new Redis(redisUrl, { maxRetriesPerRequest: null });
  const [qc, wc] = [connection(), connection()];
  const name = `bench-sms-bare-${suffix}`;
  const queue = new Queue(name, { connection: qc });
  let processed = 0;
  let lastDone = 0;
  const worker = new Worker(name, async () => undefined, { connection: wc, concurrency: 50 });
  worker.on('completed', () => {
    processed++;
    lastDone = performance.now();
  });
  const t0 = performance.now();
  const adds = await closedLoopOver(workers, n, async (i) => Boolean(await queue.add('job', { i }, { removeOnComplete: true })));
  while (processed < n) await new Promise((r) => setTimeout(r, 20));
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  qc.disconnect();
  wc.disconnect();
  return { added: rate(n, adds.elapsedS * 1000), addLatencies: adds.latencies, processed: rate(n, lastDone - t0) };
}

/** A bare `smpp` session: `n` submit_sm with `window` in flight, and the receipts that follow. */
async function bareSmpp(port: number, n: number, window: number) {
  const session = smpp.connect({ url: `smpp://127.0.0.1:${port}` });
  await new Promise<void>((resolve, reject) => session.bind_transceiver({ system_id: 'bench', password: 'bench' }, (pdu: { command_status: number }) => (pdu.command_status === 0 ? resolve() : reject(new Error('bind refused')))));
  let receipts = 0;
  let lastReceipt = 0;
  session.on('deliver_sm', (pdu: { response(): unknown }) => {
    session.send(pdu.response());
    receipts++;
    lastReceipt = performance.now();
  });
  const t0 = performance.now();
  const submits = await closedLoopOver(window, n, (i) =>
    new Promise<boolean>((resolve) =>
      session.submit_sm({ source_addr: 'BENCH', destination_addr: `4474${String(i * 10 + 1).padStart(8, '0')}`, registered_delivery: 1, short_message: 'bench' }, (pdu: { command_status: number }) => resolve(pdu.command_status === 0)),
    ),
  );
  while (receipts < n && performance.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 20));
  session.close();
  return { submitted: rate(n, submits.elapsedS * 1000), latencies: submits.latencies, receipts: rate(receipts, lastReceipt - t0), lost: n - receipts };
}

/** The pid of the Redis server behind `url` when it runs on this machine (its CPU is metered too). */
async function redisServerPid(url: string): Promise<number | undefined> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    const pid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
    return Number.isInteger(pid) && processCpuUs(pid) >= 0 ? pid : undefined;
  } finally {
    redis.disconnect();
  }
}

/**
 * Refuses to start while another process serves messaging's send queue on this Redis database:
 * the queue name is fixed, so its worker (a `meld start` left running, say) would take the
 * bench's jobs, find none of their rows in its own database, and leave them `enqueued`.
 */
async function refuseSharedSendQueue(url: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  const queue = new Queue(SEND_QUEUE, { connection: redis });
  try {
    const workers = await queue.getWorkersCount();
    if (workers > 0) {
      throw new Error(`${workers} worker(s) already serve the ${SEND_QUEUE} queue on ${url} (another messaging app on this Redis database): they would take the bench's jobs; stop them or point MELD_REDIS_URL at another database`);
    }
  } finally {
    await queue.close();
    redis.disconnect();
  }
}

/** Until every outbox row of the bench's database has been relayed to Kafka. */
async function waitOutboxEmpty(db: { query(sql: string): Promise<Array<{ n: number }>> }, timeoutMs = 60_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const [{ n }] = await db.query(`SELECT (SELECT count(*) FROM sms_outbox) + (SELECT count(*) FROM outbox) AS n`);
    if (Number(n) === 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`outbox rows still waiting after ${timeoutMs / 1000} s`);
}

export async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const messages = ctx.args.int('messages', 2000);
  const connections = ctx.args.int('connections', 32);
  const halfSeconds = ctx.args.int('half-seconds', 10);
  const receiptDelayMs = ctx.args.int('receipt-delay-ms', 100);
  const direct = ctx.args.bool('direct', false);
  const profileDir = ctx.args.string('profile');
  const enqueueOnly = ctx.args.bool('enqueue-only', false);
  // The deployed shape unless told otherwise (ADR 0326); --enqueue-only has its own sequence of roles.
  const split = ctx.args.bool('split', !enqueueOnly);
  const pgStatements = ctx.args.bool('pg-statements', false);
  const warmUp = ctx.args.int('warm-up', 0);
  const withFloor = !ctx.args.flag('no-floor');
  const floorAfter = withFloor && ctx.args.flag('floor-after');
  if (split && enqueueOnly) throw new Error('--split and --enqueue-only exclude each other: --enqueue-only runs api, then delivery');
  const serverUrl = process.env.MELD_POSTGRES_URL;
  const redisUrl = process.env.MELD_REDIS_URL;
  if (!serverUrl || !redisUrl) throw new Error('MELD_POSTGRES_URL / MELD_REDIS_URL not set: run with the stack up');

  await refuseSharedSendQueue(redisUrl);
  const suffix = randomBytes(4).toString('hex');
  const pg = await benchPostgres(serverUrl, `meld_bench_sms_${suffix}`);
  const kafka = await startPrivateKafka(ctx.root, [Topics.smsStatus, Topics.events, `${Topics.smsStatus}.dlq`, `${Topics.events}.dlq`], 8, ctx.log);
  const smsc = await startSmsc({ port: 0, receiptDelayMs });
  const receiver = new WebhookReceiver();
  const children: Record<string, ChildProcess> = {};
  try {
    const tenant = await createBenchTenant(pg.db, { name: `bench-sms-${suffix}`, dataSources: 1, productScopes: ['PROJECT_DIRECT_WRITE'] });
    const projectId = tenant.project.id;
    const [sender] = await pg.db.query(`INSERT INTO senders (project_id, channel, alias, name, status) VALUES ($1, 'sms', 'MELD', 'Meld', 'active') RETURNING id`, [projectId]);
    await pg.db.query(`INSERT INTO sender_countries (sender_id, country, accepted, effective_status, price) VALUES ($1, 'GB', true, 'active', 0.04)`, [sender.id]);
    await pg.db.query(`UPDATE projects SET locale = 'en_GB', default_sms_sender = $2 WHERE id = $1`, [projectId, sender.id]);
    await pg.db.query(`INSERT INTO webhooks (organization_id, kind, url, secret) VALUES ($1, 'sms-status', $2, $3)`, [tenant.organizationId, await receiver.start(), `whsec_${randomBytes(24).toString('base64')}`]);
    // Contacts with a source contact behind each (timeline events go out too); numbers never end in 13, 14 or 99 (the simulator's failures).
    const total = messages * 4 + warmUp;
    const contactIds: string[] = (
      await pg.db.query(
        `WITH c AS (INSERT INTO audience_contacts (project_id, id, attributes)
                    SELECT $1, gen_random_uuid(), jsonb_build_object('_user_id', 'u' || i, '_phone_mobile', '+4474' || lpad((i * 10 + 1)::text, 8, '0'))
                      FROM generate_series(1, $2::int) i RETURNING id, attributes->>'_user_id' AS user_id)
         INSERT INTO audience_members (project_id, data_source_id, user_id, audience_id) SELECT $1, $3, user_id, id FROM c RETURNING audience_id`,
        [projectId, total, tenant.dataSources[0]!.id],
      )
    ).map((r: { audience_id: string }) => r.audience_id);

    const keys = generatePrincipalKeys(['messaging']);
    const [gatewayPort, messagingPort] = [await freePort(), await freePort()];
    const messagingUrl = `http://127.0.0.1:${messagingPort}`;
    const common = { ...process.env, LOG_LEVEL: 'warn', ...keys, MELD_POSTGRES_URL: pg.url, MELD_REDIS_URL: redisUrl };
    const messagingEnv = { ...common, MELD_KAFKA_BROKERS: kafka.brokers.join(','), MELD_SMSC_URL: `smpp://127.0.0.1:${smsc.port}`, MELD_WEBHOOK_ALLOW_PRIVATE: '1' };
    const profile = (name: string) => (profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}.cpuprofile`] : []);
    children.messaging = startApp(ctx.root, 'messaging', { ...messagingEnv, PORT: String(messagingPort), MELD_MESSAGING_ROLE: split || enqueueOnly ? 'api' : 'all' }, profile('messaging'));
    const deliveryPort = split || enqueueOnly ? await freePort() : 0;
    const startDelivery = () => (children['messaging-delivery'] = startApp(ctx.root, 'messaging', { ...messagingEnv, PORT: String(deliveryPort), MELD_MESSAGING_ROLE: 'delivery' }, profile('messaging-delivery')));
    if (split) startDelivery();
    children.gateway = startApp(ctx.root, 'gateway', {
      ...common, MELD_PORT: String(gatewayPort), MELD_OPS_PORT: '0', MELD_MESSAGING_URL: messagingUrl,
      MELD_RATE_LIMITS: JSON.stringify({ standard: { limit: 1_000_000_000 }, large: { limit: 1_000_000_000 } }), MELD_RATE_LIMIT_NAMESPACE: `bench-${suffix}`,
    }, profile('gateway'));
    await Promise.all([waitReady(`${messagingUrl}/readyz`), waitReady(`http://127.0.0.1:${gatewayPort}/readyz`), ...(split ? [waitReady(`http://127.0.0.1:${deliveryPort}/readyz`)] : [])]);

    ctx.log(`baselines: bare BullMQ and bare smpp, ${messages} each`);
    const bull = await bareBullmq(redisUrl, messages, connections, suffix);
    const bare = await bareSmpp(smsc.port, messages, connections);
    const redisPid = await redisServerPid(redisUrl);
    ctx.log('baseline: the floor (ADR 0320)');
    const measureTheFloor = () =>
      measureFloor({
        root: ctx.root, db: pg.db, postgresUrl: pg.url, postgresPids: () => pg.backendPids(), redisUrl, redisPid, smscPort: smsc.port,
        messages, connections, warmUp, enqueueOnly, split, log: ctx.log,
      });
    const floorBefore = withFloor ? await measureTheFloor() : undefined;

    const pool = new Pool(direct ? messagingUrl : `http://127.0.0.1:${gatewayPort}`, { connections, keepAliveTimeout: 30_000 });
    const signingKey = parsePrincipalKey(keys[principalKeyEnv('messaging')]!);
    /** What the gateway adds to a request it forwards (ADR 0102); with --direct the bench signs it itself. */
    const principal = (path: string): Record<string, string> => {
      if (!direct) return { authorization: `Bearer ${tenant.productToken}` };
      const requestId = randomUUID();
      const header = encodePrincipal(
        { kind: 'product', tokenId: null, organizationId: tenant.organizationId, plan: 'xl', scopes: ['PROJECT_DIRECT_WRITE'], project: { id: projectId, uid: tenant.project.uid, dataMode: 'normal' }, dataSourceId: null, requestId },
        { method: 'POST', url: path, app: 'messaging' },
        signingKey,
      );
      return { 'x-meld-principal': header, 'x-request-id': requestId };
    };
    const requestedAt = new Map<string, number>();
    let firstFailure: string | undefined;
    let next = 0;
    const send = async () => {
      const contact = contactIds[next++]!;
      const path = `/v1/project/${tenant.project.uid}/channel/sms/sms/direct/default/${contact}`;
      const t = performance.now();
      const res = await pool.request({
        method: 'POST',
        path,
        headers: { ...principal(path), 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'Your code is 4821' }),
      });
      const body = (await res.body.json()) as { entity?: { id: string }; message?: string };
      if (res.statusCode !== 201 || !body.entity) {
        // The bench's own project and contacts: the answer names no one outside it.
        firstFailure ??= `${res.statusCode} ${JSON.stringify(body.message ?? body).slice(0, 200)}`;
        return false;
      }
      requestedAt.set(body.entity.id, t);
      return true;
    };

    if (warmUp > 0) {
      ctx.log(`warm-up: ${warmUp} sends from ${connections} connections, not metered`);
      const warm = await closedLoopOver(connections, warmUp, () => send());
      if (warm.errors) throw new Error(`warm-up: ${warm.errors} sends failed, the first answered ${firstFailure ?? 'nothing (a network error)'}`);
      // Their outbox rows relayed (and on the full path, their deliveries done) before the meters start.
      if (enqueueOnly) await waitOutboxEmpty(pg.db);
      else if (await receiver.settle([...requestedAt.keys()], 120_000)) throw new Error('warm-up: messages not delivered');
    }
    const warmIds = [...requestedAt.keys()];
    requestedAt.clear();

    ctx.log(`peak: ${messages} sends from ${connections} connections`);
    const meter = await new CpuMeter([
      ...Object.entries(children).map(([name, child]) => ({ name, pid: child.pid! })),
      { name: 'postgres', pids: () => pg.backendPids() },
      ...(redisPid ? [{ name: 'redis', pid: redisPid }] : []),
    ]).start();
    // Transactions, explicit or of one statement: per message, the Postgres round trips' groups (ADR 0251).
    const transactions = async () => Number((await pg.db.query(`SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()`))[0].n);
    const statements = pgStatements ? new PgStatements(pg.db) : undefined;
    await statements?.start();
    const xactsBefore = await transactions();
    const t0 = performance.now();
    const peak = await closedLoopOver(connections, messages, () => send());
    const peakIds = [...requestedAt.keys()];
    let cpu: Record<string, number> | undefined;
    let xacts = Number.NaN;
    let drainStartedAt: Date | undefined;
    let drainMeter: CpuMeter | undefined;
    if (enqueueOnly) {
      // The api role's own outbox rows (the `enqueued` changes) are part of the enqueue path.
      await waitOutboxEmpty(pg.db);
      cpu = await meter.stop();
      await new Promise((r) => setTimeout(r, 1500));
      xacts = (await transactions()) - xactsBefore;
      ctx.log('enqueue path measured: starting the delivery role on the backlog');
      // The drain is metered on its own (ADR 0300): the delivery process from its start, Postgres and Redis.
      await statements?.start();
      drainStartedAt = new Date();
      startDelivery();
      await waitReady(`http://127.0.0.1:${deliveryPort}/readyz`);
      // From readiness on: the process's start (modules loaded, about a second of CPU) is not the drain's.
      drainMeter = await new CpuMeter([
        { name: 'messaging-delivery', pid: children['messaging-delivery']!.pid! },
        { name: 'postgres', pids: () => pg.backendPids() },
        ...(redisPid ? [{ name: 'redis', pid: redisPid }] : []),
      ]).start();
    }
    const peakLost = await receiver.settle(peakIds, 120_000) + peak.errors;
    // The warm-up's messages wait in the backlog with the peak's (--enqueue-only): the drain is theirs too, and none may be lost.
    const drained = enqueueOnly ? [...warmIds, ...peakIds] : peakIds;
    const warmLost = enqueueOnly ? await receiver.settle(warmIds, 60_000) : 0;
    const drainCpu = await drainMeter?.stop();
    if (!cpu) {
      cpu = await meter.stop();
      // The statistics reach pg_stat_database up to a second after a commit.
      await new Promise((r) => setTimeout(r, 1500));
      xacts = (await transactions()) - xactsBefore;
    }
    const statementCosts = statements ? [...statementNotes(await statements.stop(), messages), 'row changes per message, the whole run (set-up included):', ...(await tableChanges(pg.db, messages))] : [];
    const lastDelivered = Math.max(...peakIds.map((id) => receiver.delivered.get(id) ?? 0));
    const [times] = await pg.db.query(
      `SELECT count(*) FILTER (WHERE status = 'sent')::int AS sent, extract(epoch FROM max(at) FILTER (WHERE status = 'sent') - min(at) FILTER (WHERE status = 'enqueued')) * 1000 AS "sentMs",
              count(*) FILTER (WHERE status = 'delivered')::int AS delivered, extract(epoch FROM max(at) FILTER (WHERE status = 'delivered') - min(at) FILTER (WHERE status = 'enqueued')) * 1000 AS "deliveredMs"
         FROM sms_status_history WHERE sms_id = ANY($1::uuid[])`,
      [peakIds],
    );
    // With --enqueue-only the rate above runs from the first request, over the enqueue window and the delivery
    // process's start: the backlog's own rate runs from its first `sent` to its last `delivered` (ADR 0300).
    const [drain] = enqueueOnly
      ? await pg.db.query(
          `SELECT extract(epoch FROM max(at) FILTER (WHERE status = 'delivered') - min(at) FILTER (WHERE status = 'sent')) * 1000 AS "drainMs",
                  extract(epoch FROM min(at) FILTER (WHERE status = 'sent') - $2::timestamptz) * 1000 AS "startMs"
             FROM sms_status_history WHERE sms_id = ANY($1::uuid[])`,
          [drained, drainStartedAt!.toISOString()],
        )
      : [undefined];
    const webhookRate = rate(receiver.arrivals.length, Math.max(...receiver.arrivals) - Math.min(...receiver.arrivals));
    const deliveredRate = rate(times.delivered, Number(times.deliveredMs));
    const endToEnd = rate(messages - peakLost, lastDelivered - t0);

    if (floorAfter) ctx.log('baseline: the floor again, after the peak');
    const floorAgain = floorAfter ? await measureTheFloor() : undefined;
    const floor = floorBefore && floorAgain ? meanFloor(floorBefore, floorAgain) : floorBefore;

    const halfRate = Math.max(1, Math.floor(deliveredRate / 2));
    ctx.log(`half of peak: ${halfRate} sends/s for ${halfSeconds} s`);
    requestedAt.clear();
    const half = await openLoop(halfRate, halfSeconds, 0, () => send());
    const halfIds = [...requestedAt.keys()];
    const halfLost = await receiver.settle(halfIds, 60_000) + half.errors;
    const toDelivered = halfIds.filter((id) => receiver.delivered.has(id)).map((id) => receiver.delivered.get(id)! - requestedAt.get(id)!);
    await pool.close();

    const lost = peakLost + halfLost + warmLost;
    const sends = warmIds.length + peakIds.length + halfIds.length;
    const rows = [
      row('bare BullMQ add', bull.added, bull.addLatencies),
      row('bare BullMQ processed', bull.processed),
      row('bare smpp submit_sm', bare.submitted, bare.latencies),
      row('bare smpp receipts', bare.receipts),
      ...(floor
        ? [
            row('floor enqueued (bare proxy, bare HTTP: INSERT, BullMQ add, 201)', floor.enqueued, floor.latencies),
            row(`floor delivered (receipt processed)${enqueueOnly ? ' on the backlog, from the first request' : ''}`, floor.delivered),
            ...(floor.drained !== undefined ? [row('floor backlog drained (first sent to last delivered)', floor.drained)] : []),
          ]
        : []),
      row(`Meld enqueued (POST ${direct ? 'straight to messaging' : 'through the gateway'}, 201)`, rate(messages, peak.elapsedS * 1000), peak.latencies, floor ? 'floor enqueued (bare proxy, bare HTTP: INSERT, BullMQ add, 201)' : 'bare BullMQ add'),
      row(`Meld submitted (sent)${enqueueOnly ? ' by the delivery role on the backlog' : ''}`, rate(times.sent, Number(times.sentMs)), [], 'bare smpp submit_sm'),
      row(
        `Meld delivered (receipt processed)${enqueueOnly ? ' on the backlog, from the first request' : ''}`,
        deliveredRate,
        [],
        floor ? `floor delivered (receipt processed)${enqueueOnly ? ' on the backlog, from the first request' : ''}` : 'bare smpp receipts',
      ),
      ...(drain
        ? [row('Meld backlog drained by the delivery role (first sent to last delivered)', rate(drained.length, Number(drain.drainMs)), [], floor ? 'floor backlog drained (first sent to last delivered)' : 'bare smpp receipts')]
        : []),
      row('Meld webhook deliveries (every status change after enqueued)', webhookRate),
      row(`Meld request → delivered webhook at ${halfRate}/s (half of peak delivered)`, halfIds.length / halfSeconds, toDelivered),
    ];
    const enqueued = rate(messages, peak.elapsedS * 1000);
    return {
      title: `sms${direct ? ' (straight to messaging)' : ''}${warmUp ? ` (after ${warmUp} warm-up sends)` : ''}${split ? ' (messaging as api + delivery processes)' : ''}${enqueueOnly ? ' (enqueue path alone: api role during the peak, delivery role started after it)' : ''}: ${messages} direct SMS at peak from ${connections} connections, then ${halfSeconds} s at half of peak; simulator receipts after ${receiptDelayMs} ms`,
      units: { throughput: 'messages/s (webhook deliveries/s for that row)', latency: 'request (or add / submit) to its answer; the half-peak row: request to the delivered webhook' },
      rows,
      notes: [
        `goal ≥ 1,000 enqueued/s: ${enqueued.toFixed(0)} ${enqueued >= 1000 ? 'MET' : 'MISSED'}`,
        `goal ≥ 500 delivered/s: ${deliveredRate.toFixed(0)} ${deliveredRate >= 500 ? 'MET' : 'MISSED'} (end to end, first request to last delivered webhook: ${endToEnd.toFixed(0)}/s)`,
        `goal no message lost: ${lost === 0 ? 'MET' : `MISSED (${lost} without a delivered webhook${firstFailure ? `, counting sends not answered 201: the first answered ${firstFailure}` : ''})`}; bare smpp receipts missing: ${bare.lost}; reports received twice (same webhook-id): ${receiver.duplicates}`,
        // A message owes one report per change after `enqueued` (ADR 0351): here `sent` and `delivered`, each once per send of the run.
        `reports received by status (whole run, ${sends} sends): ${reportCounts(receiver.byStatus)}`,
        `CPU per message over the peak (first request to ${enqueueOnly ? 'last 201, outbox relayed' : 'last delivered webhook'}${redisPid ? '; redis: the whole server, other users of it included' : ''}): ${Object.entries(cpu).map(([name, us]) => `${name} ${(us / messages).toFixed(0)} µs`).join(', ')}; Postgres transactions per message ${(xacts / messages).toFixed(2)}`,
        ...(drain && drainCpu
          ? [
              `backlog drain (--enqueue-only): the delivery process's first sent ${Number(drain.startMs).toFixed(0)} ms after its start, then ${Number(drain.drainMs).toFixed(0)} ms to the last delivered; CPU per message from its readiness to the last delivered webhook: ${Object.entries(drainCpu).map(([name, us]) => `${name} ${(us / drained.length).toFixed(0)} µs`).join(', ')}${pgStatements ? '; the statements below are the drain\'s' : ''}`,
            ]
          : []),
        ...(floor
          ? [
              ...(floorAgain ? [`floor before Meld's peak: ${floorBefore!.enqueued.toFixed(0)} enqueued/s, ${floorBefore!.delivered.toFixed(0)} delivered/s; after it: ${floorAgain.enqueued.toFixed(0)} and ${floorAgain.delivered.toFixed(0)}; the figures below are their means`] : []),
              `floor (ADR 0320): ${floor.enqueued.toFixed(0)} enqueued/s, ${floor.delivered.toFixed(0)} delivered/s${floor.drained !== undefined ? `, backlog drained ${floor.drained.toFixed(0)}/s` : ''}; lost ${floor.lost}; reports received ${reportCounts(new Map(Object.entries(floor.reports)))}; CPU per message over its peak: ${Object.entries(floor.cpu).map(([name, us]) => `${name} ${us.toFixed(0)} µs`).join(', ')}`,
              // The machine's speed moves both alike: across runs, compare these ratios rather than the rates (ADR 0320).
              `Meld / floor, same run: enqueued ${(enqueued / floor.enqueued).toFixed(2)}, delivered ${(deliveredRate / floor.delivered).toFixed(2)}${drain && floor.drained ? `, drained ${(rate(drained.length, Number(drain.drainMs)) / floor.drained).toFixed(2)}` : ''}; CPU per message ${(sum(Object.values(cpu)) / messages / sum(Object.values(floor.cpu))).toFixed(2)}×`,
            ]
          : []),
        'one machine: bench client, simulator, receiver, gateway, messaging, Postgres, Redis and the broker share its cores',
        ...statementCosts,
      ],
    };
  } finally {
    await Promise.all(Object.values(children).map((c) => stopApp(c)));
    await receiver.stop();
    await smsc.close();
    await kafka.stop();
    await pg.drop();
  }
}
