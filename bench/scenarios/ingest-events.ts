/**
 * ingest-events (skeleton, issue 4): `POST …/stream/events` through the gateway (token →
 * rate limit → ingest: validation, `event_ids` dedup, produce to meld.events.v1 with acks
 * -1, COMMIT) vs a raw ClickHouse insert of the same rows, in the same run. Batches of 100,
 * --clients 16 concurrent clients (closed loop). Figures: accepted events/s and batch
 * p50/p99 for both. Not yet measured: end-to-end events/s (visible in ClickHouse) and p99 at
 * half of peak load: they need the ClickHouse events sink (identity-merge / probes side).
 *
 * The bench starts its own gateway and ingest processes from the built apps (`npm run
 * build`) on free ports against the dev stack, with the ingest rate limit raised, creates
 * (then deletes) a plan-xl organization, a project with one event type, a data source, its
 * token and --users contacts; the raw table is a temporary ReplacingMergeTree on
 * (project_id, event_id) in the dev ClickHouse database, dropped at the end.
 *
 * Options: --seconds N (5 per round), --rounds R (3), --clients C (16), --batch B (100),
 * --users U (1000), --warmup S (1).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Pool } from 'undici';
import { issueToken } from '../../libs/auth/src';
import { createClickHouse } from '../../libs/clickhouse/src';
import { INGEST_SCOPES, defaultAttributionConfig, defaultGeneralConfig } from '../../libs/contracts/src';
import { DataSourceEntity, EventTypeEntity, OrganizationEntity, ProjectEntity, TokenEntity, createDataSource } from '../../libs/db/src';
import { freePort, startApp, waitReady } from '../lib/apps';
import { closedLoop } from '../lib/load';
import type { BenchContext, BenchRow, ScenarioResult } from '../lib/context';
import { RssSampler, type WatchedProcess } from '../lib/processes';
import { median, percentile } from '../lib/stats';

interface Figures {
  eventsPerS: number;
  p50: number;
  p99: number;
  errors: number;
  [key: string]: number;
}

interface EventRow {
  userId: string;
  eventId: string;
  eventDate: string;
}




/** Closed loop: each client sends its next batch as soon as the last one is answered. */
async function load(send: (rows: EventRow[]) => Promise<boolean>, next: () => EventRow[], clients: number, seconds: number, warmupSeconds: number, batch: number): Promise<Figures> {
  const { latencies, errors, elapsedS } = await closedLoop(clients, seconds, warmupSeconds, () => send(next()));
  return { eventsPerS: ((latencies.length - errors) * batch) / elapsedS, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors };
}

export async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const seconds = ctx.args.int('seconds', 5);
  const rounds = ctx.args.int('rounds', 3);
  const clients = ctx.args.int('clients', 16);
  const batch = ctx.args.int('batch', 100);
  const users = ctx.args.int('users', 1000);
  const warmup = ctx.args.int('warmup', 1);
  const postgresUrl = process.env.MELD_POSTGRES_URL;
  const clickhouseUrl = process.env.MELD_CLICKHOUSE_URL;
  if (!postgresUrl || !process.env.MELD_REDIS_URL || !clickhouseUrl || !process.env.MELD_KAFKA_BROKERS) {
    throw new Error('MELD_POSTGRES_URL / MELD_REDIS_URL / MELD_CLICKHOUSE_URL / MELD_KAFKA_BROKERS not set: run through `meld bench ingest-events` with the stack up');
  }

  const db = await createDataSource({ url: postgresUrl, applicationName: 'meld-bench', poolSize: 2 }).initialize();
  const ch = createClickHouse({ url: clickhouseUrl, database: process.env.MELD_CLICKHOUSE_DB ?? 'meld', application: 'meld-bench', maxOpenConnections: clients });
  const suffix = randomBytes(4).toString('hex');
  const rawTable = `bench_ingest_events_${suffix}`;
  const org = await db.getRepository(OrganizationEntity).save({ name: `bench-ingest-${suffix}`, plan: 'xl' });
  const project = await db.getRepository(ProjectEntity).save({
    uid: `bench-ingest-${suffix}`,
    organizationId: org.id,
    name: 'Bench ingest',
    attributionConfig: defaultAttributionConfig(),
    generalConfig: defaultGeneralConfig() as unknown as Record<string, Record<string, unknown>>,
  });
  await db.getRepository(EventTypeEntity).save({ projectId: project.id, uid: 'page_view', name: 'Page view', category: 'contact_behaviour' });
  const dataSource = await db.getRepository(DataSourceEntity).save({ projectId: project.id, uid: `bench-${suffix}`, name: 'Bench' });
  const issued = issueToken('datasource');
  await db.getRepository(TokenEntity).save({
    organizationId: org.id,
    kind: 'datasource',
    secretHash: issued.secretHash,
    prefix: issued.prefix,
    scopes: [...INGEST_SCOPES],
    projects: [project.uid],
    dataSourceId: dataSource.id,
  });
  await ch.command(
    `CREATE TABLE ${rawTable} (project_id String, data_source_id String, user_id String, event_id String, event_type String, event_date DateTime, received_at DateTime, parameters String) ENGINE = ReplacingMergeTree() ORDER BY (project_id, event_id)`,
  );

  const secret = randomBytes(24).toString('base64url');
  const [gatewayPort, ingestPort] = [await freePort(), await freePort()];
  const ingestUrl = `http://127.0.0.1:${ingestPort}`;
  const common = { ...process.env, LOG_LEVEL: 'warn', MELD_PRINCIPAL_SECRET: secret };
  const children: Record<string, ChildProcess> = {
    ingest: startApp(ctx.root, 'ingest', { ...common, PORT: String(ingestPort) }),
    gateway: startApp(ctx.root, 'gateway', {
      ...common,
      MELD_PORT: String(gatewayPort),
      MELD_INGEST_URL: ingestUrl,
      MELD_RATE_LIMITS: JSON.stringify({ ingest: { limit: 1_000_000_000 } }),
      MELD_RATE_LIMIT_NAMESPACE: `bench-${suffix}`,
    }),
  };
  const gateway = `http://127.0.0.1:${gatewayPort}`;
  const path = `/v1/project/${project.uid}/datasource/${dataSource.id}/stream`;
  const pool = new Pool(gateway, { connections: clients, pipelining: 1, keepAliveTimeout: 30_000 });
  const headers = { authorization: `Bearer ${issued.token}`, 'content-type': 'application/json' };
  try {
    await Promise.all([waitReady(`${ingestUrl}/readyz`), waitReady(`${gateway}/readyz`)]);
    // Event-only items need a live contact: create the users first, through the same door.
    for (let start = 0; start < users; start += 100) {
      const body = JSON.stringify(Array.from({ length: Math.min(100, users - start) }, (_, i) => ({ _user_id: `user-${start + i}` })));
      const res = await pool.request({ method: 'POST', path: `${path}/contacts`, headers, body });
      if (res.statusCode !== 202) throw new Error(`creating contacts answered ${res.statusCode}: ${await res.body.text()}`);
      await res.body.dump();
    }
    const processes: WatchedProcess[] = [{ name: 'bench', pid: process.pid }, ...Object.entries(children).map(([name, c]) => ({ name, pid: c.pid! }))];
    let seq = 0;
    const next = (): EventRow[] => {
      const eventDate = new Date().toISOString();
      return Array.from({ length: batch }, () => {
        const n = seq++;
        return { userId: `user-${n % users}`, eventId: `${suffix}-${n}`, eventDate };
      });
    };
    const viaGateway = async (rows: EventRow[]) => {
      const body = JSON.stringify(rows.map((r) => ({ _user_id: r.userId, _event_id: r.eventId, _event_type: 'page_view', _event_date: r.eventDate, _event_parameters: { url: '/bench' } })));
      const res = await pool.request({ method: 'POST', path: `${path}/events`, headers, body });
      await res.body.dump();
      return res.statusCode === 202;
    };
    const chTime = (iso: string) => iso.slice(0, 19).replace('T', ' ');
    const raw = async (rows: EventRow[]) => {
      const receivedAt = chTime(new Date().toISOString());
      await ch.insert(
        rawTable,
        rows.map((r) => ({ project_id: project.id, data_source_id: dataSource.id, user_id: r.userId, event_id: r.eventId, event_type: 'page_view', event_date: chTime(r.eventDate), received_at: receivedAt, parameters: '{"url":"/bench"}' })),
      );
      return true;
    };
    ctx.log(`gateway :${gatewayPort} → ingest :${ingestPort}; ${rounds} rounds × ${seconds} s; ${clients} clients × ${batch} events per batch; ${users} contacts`);

    const variants = [
      { name: 'events through gateway + ingest', send: viaGateway },
      { name: 'raw ClickHouse insert', send: raw },
    ];
    const results = new Map<string, Figures[]>();
    const rss = new Map<string, Array<Record<string, number>>>();
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? variants : [...variants].reverse();
      for (const v of order) {
        const sampler = new RssSampler(processes).start();
        const f = await load(v.send, next, clients, seconds, warmup, batch);
        rss.set(v.name, [...(rss.get(v.name) ?? []), sampler.stop()]);
        results.set(v.name, [...(results.get(v.name) ?? []), f]);
        ctx.log(`round ${round + 1} ${v.name}: ${f.eventsPerS.toFixed(0)} events/s, batch p50 ${f.p50.toFixed(2)} ms, p99 ${f.p99.toFixed(2)} ms${f.errors ? `, ${f.errors} failed batches` : ''}`);
      }
    }
    const med = (key: string, field: keyof Figures) => median(results.get(key)!.map((f) => f[field]));
    const peak = (key: string) => Object.fromEntries(processes.map((p) => [p.name, Math.max(...rss.get(key)!.map((r) => r[p.name] ?? Number.NaN))]));
    const rows: BenchRow[] = variants.map((v, i) => ({
      name: v.name,
      throughput: med(v.name, 'eventsPerS'),
      p50Ms: med(v.name, 'p50'),
      p99Ms: med(v.name, 'p99'),
      peakRssMb: peak(v.name),
      baseline: i === 0 ? variants[1].name : undefined,
      runs: rounds,
    }));
    const errors = [...results.values()].flat().reduce((n, f) => n + f.errors, 0);
    return {
      title: `ingest-events: accepted events/s through the gateway vs a raw ClickHouse insert (${clients} clients, batches of ${batch}, ${rounds} rounds × ${seconds} s)`,
      units: { throughput: 'events/s', latency: 'one batch, client side' },
      rows,
      notes: [
        `failed batches: ${errors}`,
        'skeleton: end-to-end events/s (visible in ClickHouse) and p99 at half of peak load are not measured yet (need the ClickHouse events sink)',
        'one machine: bench client, gateway, ingest, Postgres, Kafka dev broker and ClickHouse share its cores',
      ],
    };
  } finally {
    await pool.close();
    await Promise.all(
      Object.values(children).map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            const kill = setTimeout(() => c.kill('SIGKILL'), 10_000);
            c.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            c.kill('SIGTERM');
          }),
      ),
    );
    await ch.command(`DROP TABLE IF EXISTS ${rawTable}`).catch(() => undefined);
    await ch.close();
    await db.query(`DELETE FROM source_contacts WHERE project_id = $1`, [project.id]);
    await db.query(`DELETE FROM event_ids WHERE project_id = $1`, [project.id]);
    await db.getRepository(OrganizationEntity).delete({ id: org.id });
    await db.destroy();
  }
}
