/**
 * audience-sink: the probes audience sink alone (`meld.audience.v1` → ClickHouse
 * `audience_membership`, `audience_contacts` and the collapsing `audience_snapshot`, ADR 0223).
 * --contacts N audience contacts, each in --versions V snapshot messages as identity-merge
 * publishes them (keyed by audience contact, one or two source contacts each, attributes typed by
 * the project's catalogue, `removedDsContactIds` empty: nobody left), are written to a private
 * development broker first, version 1 of every contact, then version 2, …; then the probes app
 * (built, its own process) starts with a new consumer group and drains them into a ClickHouse
 * database of the bench's own. Probes reads each project's catalogue from Postgres
 * (ProjectContextCache: `projects`, `attributes`), so every round gets a project of its own in a
 * bench Postgres database: the tenant the admin API would leave, plus six custom attributes
 * (string, number, boolean, date, a multivalue), which get their slot columns from the database.
 *
 * Figure: snapshots (messages) per second from the first state visible to the last, where visible
 * means the contact's current state in `audience_snapshot` (sum(sign × step version): a contact at
 * version v counts v, so the figure counts messages even when a write keeps only a contact's
 * newest state) and, at the end, every member of the last step in `audience_membership`; the probes
 * CPU per snapshot (and ClickHouse's, when the stack runs it), vs a raw ClickHouse insert of the
 * same number of `audience_contacts`-like rows in --raw-batch rows per insert, in the same run.
 * --rounds R repeats everything (a new backlog, group and project each).
 *
 * --before ROOT also drains each round's backlog (a second, identical one) through the probes
 * built at ROOT (ROOT/apps/probes/dist/main.js, e.g. a copy of the dist before a change, kept
 * under this checkout so its packages resolve): A/B figures from the same run, the two
 * alternating first from round to round.
 *
 * --probes ROOT measures the probes built at ROOT instead of this checkout's: another session's
 * `npm run build` (npm test builds every app first) may rebuild apps/probes/dist from other code
 * between two runs, so an A/B series is best measured on two copies of its own.
 *
 * --rate R sends the snapshots at R a second (sends of --batch, one at a time) once probes is up,
 * instead of a backlog first: a steady flow, where the figures are the CPU per snapshot (probes,
 * ClickHouse) and how long after the last send the last snapshot is visible, what the sink's
 * linger trades (every write is a part per table that ClickHouse writes and merges).
 *
 * --legacy 1 leaves `removedDsContactIds` out (messages published before identity-merge wrote
 * it): the sink then reads each contact's stored members before writing removals.
 *
 * The backlog must fit the dev broker (5 MB per partition, the oldest dropped silently): the run
 * refuses a backlog estimated above 4.5 MB per partition and stops with an error if the broker
 * dropped some.
 *
 * Options: --contacts N (50000), --versions V (1), --batch B (100, messages per send),
 * --producers P (4 sends at once), --partitions K (topics.json's 8, or the next multiple of 8 that
 * keeps the backlog under 4 MB per partition: 16 for the default 50,000), --raw-batch R (5000),
 * --rounds R (1), --rate R (unset: a backlog), --legacy 0|1 (0), --before ROOT, --probes ROOT,
 * --profile-probes DIR (V8 CPU profile).
 */
import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource } from 'typeorm';
import { generatePrincipalKeys } from '../../libs/auth/src';
import { type ClickHouse, sql } from '../../libs/clickhouse/src';
import { type AttributeType, type AudienceChange, PHONE_CHANNELS, Topics, allTopicNames, isEmail, isMobile, keys } from '../../libs/contracts/src';
import { AttributeEntity } from '../../libs/db/src';
import { slotValues } from '../../libs/filters/src';
import { createProducer } from '../../libs/kafka/src';
import { freePort, startApp, stopApp, waitReady } from '../lib/apps';
import { benchClickHouse, type BenchClickHouse } from '../lib/clickhouse-db';
import type { BenchContext, BenchRow, ScenarioResult } from '../lib/context';
import { processCpuUs, selfCpuUs } from '../lib/cpu';
import { benchPostgres } from '../lib/postgres-db';
import { droppedMessages, startPrivateKafka } from '../lib/private-kafka';
import { RssSampler, stackPid } from '../lib/processes';
import { pooled } from '../lib/pooled';
import { median } from '../lib/stats';
import { createBenchTenant } from '../lib/tenant';

interface Drain {
  snapshotsPerS: number;
  probesCpuUs: number;
  clickhouseCpuUs: number;
  /** From the last send to the last snapshot visible (--rate: how far the sink lags a steady flow). */
  lagMs: number;
  rssMb: Record<string, number>;
}

/** The custom attributes of each round's project (the reserved ones come with the tenant). */
const CUSTOM: Array<{ uid: string; type: AttributeType; multivalue?: boolean }> = [
  { uid: 'city', type: 'string' },
  { uid: 'plan', type: 'string' },
  { uid: 'score', type: 'number' },
  { uid: 'vip', type: 'boolean' },
  { uid: 'signup', type: 'date' },
  { uid: 'tags', type: 'string', multivalue: true },
];
const CITIES = ['Paris', 'Lyon', 'Marseille', 'Toulouse', 'Nice', 'Nantes', 'Strasbourg', 'Bordeaux', 'Lille', 'Rennes'];
const PLANS = ['free', 'starter', 'pro', 'enterprise'];

/** One round's project and what its messages are made of. */
interface Backlog {
  projectId: string;
  /** Data-source ids: every contact has a member in the first, every fifth one in the second too. */
  dataSources: [string, string];
  contacts: number;
  versions: number;
  /** Step time of each version (index 1..versions), ISO with ms as identity-merge writes it. */
  at: string[];
  legacy: boolean;
  tag: string;
}

/** A uuid-shaped audience id, the same for a contact in every version (identity-merge's ids are uuids). */
function audienceId(tag: string, n: number): string {
  const h = createHash('md5').update(`${tag}/${n}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Contact n's members (`<dataSourceId>/<userId>`), as identity-merge lists them. */
function members(b: Backlog, n: number): string[] {
  return n % 5 === 0 ? [`${b.dataSources[0]}/user-${n}`, `${b.dataSources[1]}/crm-${n}`] : [`${b.dataSources[0]}/user-${n}`];
}

/** Version v of contact n: a snapshot whose values move a little from version to version. */
function snapshot(b: Backlog, n: number, v: number): AudienceChange {
  const attributes: Record<string, string | number | boolean | string[]> = {
    _user_id: `user-${n}`,
    _email: `user${n}@example.com`,
    _first_name: `First${n % 997}`,
    _created_at: b.at[1],
    city: CITIES[(n + v) % CITIES.length],
    plan: PLANS[(n * 7 + v) % PLANS.length],
    score: (n * 13 + v) % 1000,
    vip: (n + v) % 3 === 0,
    signup: `2026-0${1 + (n % 9)}-1${n % 10}`,
    tags: Array.from({ length: n % 4 }, (_, i) => `tag-${(n + i * 7) % 20}`),
  };
  // A French mobile for every other contact (the channels need libphonenumber, as in production).
  if (n % 2 === 0) attributes._phone_mobile = `+3361${String(n % 10_000_000).padStart(7, '0')}`;
  const listed = members(b, n);
  return {
    schemaVersion: 1,
    kind: 'snapshot',
    projectId: b.projectId,
    audienceId: audienceId(b.tag, n),
    version: v,
    at: b.at[v],
    attributes,
    dataSources: n % 5 === 0 ? [...b.dataSources] : [b.dataSources[0]],
    dsContactIds: listed,
    ...(b.legacy ? {} : { removedDsContactIds: [] }),
  };
}

/** The i-th message of the backlog: every contact's version 1, then every contact's version 2, … */
function message(b: Backlog, i: number): AudienceChange {
  return snapshot(b, i % b.contacts, Math.floor(i / b.contacts) + 1);
}

export async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const contacts = ctx.args.int('contacts', 50_000);
  const versions = ctx.args.int('versions', 1);
  const batch = ctx.args.int('batch', 100);
  const producers = ctx.args.int('producers', 4);
  // ~770 bytes a snapshot on the broker (value, key, record overhead): 50,000 are ~38 MB, beyond 8 × 5 MB.
  const partitions = ctx.args.int('partitions', Math.max(8, Math.ceil((contacts * versions * 770) / 4e6 / 8) * 8));
  const rawBatch = ctx.args.int('raw-batch', 5000);
  const rounds = ctx.args.int('rounds', 1);
  const legacy = ctx.args.bool('legacy', false);
  const beforeRoot = ctx.args.string('before');
  const probesRoot = ctx.args.string('probes') ?? ctx.root;
  const profileDir = ctx.args.string('profile-probes');
  const rate = ctx.args.flag('rate') ? ctx.args.int('rate', 1) : undefined;
  const { MELD_CLICKHOUSE_URL: clickhouseUrl, MELD_POSTGRES_URL: postgresUrl } = process.env;
  if (!clickhouseUrl || !postgresUrl || !process.env.MELD_REDIS_URL) {
    throw new Error('MELD_CLICKHOUSE_URL / MELD_POSTGRES_URL / MELD_REDIS_URL not set: run through `meld bench audience-sink` with the stack up');
  }

  const suffix = randomBytes(4).toString('hex');
  const store = await benchClickHouse(clickhouseUrl, `meld_bench_${suffix}`);
  const pg = await benchPostgres(postgresUrl, `meld_bench_${suffix}`);
  const variants = [{ name: 'after', root: probesRoot }, ...(beforeRoot ? [{ name: 'before', root: beforeRoot }] : [])];
  const drains = new Map<string, Drain[]>(variants.map((v) => [v.name, []]));
  const raw: Drain[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      // Alternate which build drains first: the machine's drift spreads over both.
      const order = round % 2 === 0 ? variants : [...variants].reverse();
      let lastBacklog: Backlog | undefined;
      for (const variant of order) {
        const tag = `${suffix}-${round}-${variant.name}`;
        const backlog = await newBacklog(pg.db, { tag, contacts, versions, legacy });
        lastBacklog = backlog;
        const drain = await drainThroughProbes(ctx, { store, pgUrl: pg.url, backlog, batch, producers, partitions, rate, root: variant.root, profileDir });
        drains.get(variant.name)!.push(drain);
        ctx.log(
          `round ${round + 1} ${variant.name}: ${drain.snapshotsPerS.toFixed(0)} snapshots/s, ${drain.probesCpuUs.toFixed(1)} µs probes CPU and ${drain.clickhouseCpuUs.toFixed(1)} µs ClickHouse CPU per snapshot${rate ? `, ${drain.lagMs} ms from the last send to the last visible` : ''}`,
        );
      }
      raw.push(await rawInsert(store.ch, `audience_raw_${round}`, lastBacklog!, await catalogue(pg.db, lastBacklog!.projectId), rawBatch));
      ctx.log(`round ${round + 1} raw: ${raw[round].snapshotsPerS.toFixed(0)} rows/s`);
    }
  } finally {
    await store.drop();
    await pg.drop();
  }
  const row = (name: string, runs: Drain[], baseline?: string): BenchRow => ({
    name,
    throughput: median(runs.map((r) => r.snapshotsPerS)),
    p50Ms: Number.NaN,
    p99Ms: Number.NaN,
    cpuUsPerOp: median(runs.map((r) => r.probesCpuUs)),
    peakRssMb: Object.fromEntries(Object.keys(runs[0].rssMb).map((k) => [k, Math.max(...runs.map((r) => r.rssMb[k]))])),
    baseline,
    runs: runs.length,
  });
  const rawName = `raw ClickHouse insert (${rawBatch} rows per insert)`;
  const sinkName = (variant: string) =>
    variant === 'after' ? `probes audience sink (Kafka → ClickHouse)${probesRoot === ctx.root ? '' : ` built at ${probesRoot}`}` : `before: probes audience sink built at ${beforeRoot}`;
  const messages = contacts * versions;
  return {
    title: `audience-sink: ${contacts} audience contacts × ${versions} version(s) = ${messages} snapshots${legacy ? ' without removedDsContactIds' : ''} ${rate ? `sent at ${rate}/s in sends of ${batch} (${partitions} partitions)` : `from a Kafka backlog (${partitions} partitions, sent as ${producers} concurrent sends of ${batch})`} into ClickHouse by probes vs raw inserts of ${rawBatch} audience_contacts-like rows`,
    units: { throughput: 'snapshots/s (raw: rows/s)', latency: 'not measured', cpu: 'probes process (sink) / bench process (raw) CPU per snapshot' },
    rows: [...variants.map((v) => row(sinkName(v.name), drains.get(v.name)!, rawName)), row(rawName, raw)],
    notes: [
      'sink throughput counts from the first state visible in audience_snapshot to the last, and every member of the last step in audience_membership (group join excluded)',
      ...(rate ? variants.map((v) => `${v.name}: ${median(drains.get(v.name)!.map((d) => d.lagMs)).toFixed(0)} ms from the last send to the last snapshot visible (median)`) : []),
      ...variants.map((v) => `${v.name}: ClickHouse CPU per snapshot ${median(drains.get(v.name)!.map((d) => d.clickhouseCpuUs)).toFixed(1)} µs (median; the stack's server, NaN when it is not the stack's); per round ${drains.get(v.name)!.map((d) => d.snapshotsPerS.toFixed(0)).join(', ')} snapshots/s`),
      'one machine: broker, probes, Postgres, ClickHouse and the bench share its cores',
    ],
  };
}

/** A project of its own (tenant, two data sources, the custom attributes) and the round's step times. */
async function newBacklog(db: DataSource, o: { tag: string; contacts: number; versions: number; legacy: boolean }): Promise<Backlog> {
  const tenant = await createBenchTenant(db, { name: `bench-audience-${o.tag}`, dataSources: 2, productScopes: [] });
  // The slot columns are given by the database's trigger in creation order, as for attributes created through the API.
  for (const a of CUSTOM) await db.getRepository(AttributeEntity).insert({ projectId: tenant.project.id, uid: a.uid, label: a.uid, type: a.type, multivalue: a.multivalue ?? false });
  const start = Date.now() - 3_600_000;
  const at = Array.from({ length: o.versions + 1 }, (_, v) => new Date(start + v * 60_000 + (v % 1000)).toISOString());
  return { projectId: tenant.project.id, dataSources: [tenant.dataSources[0].id, tenant.dataSources[1].id], contacts: o.contacts, versions: o.versions, at, legacy: o.legacy, tag: o.tag };
}

async function drainThroughProbes(
  ctx: BenchContext,
  o: { store: BenchClickHouse; pgUrl: string; backlog: Backlog; batch: number; producers: number; partitions: number; rate?: number; root: string; profileDir?: string },
): Promise<Drain> {
  const b = o.backlog;
  const total = b.contacts * b.versions;
  const bytes = Buffer.byteLength(JSON.stringify(message(b, 0))) + 120; // value, key and record overhead
  const perPartitionMb = (bytes * total) / o.partitions / 1e6;
  if (perPartitionMb > 4.5) throw new Error(`~${perPartitionMb.toFixed(1)} MB per partition: the dev broker keeps 5 MB per partition; use more --partitions or fewer --contacts`);
  const kafka = await startPrivateKafka(ctx.root, allTopicNames(), o.partitions, ctx.log);
  const producer = createProducer({ brokers: kafka.brokers, clientId: 'meld-bench' });
  try {
    await producer.connect();
    const send = async (s: number) => {
      const messages = [];
      for (let i = s * o.batch; i < Math.min(total, (s + 1) * o.batch); i++) {
        const m = message(b, i);
        messages.push({ key: keys.audienceContact(m.projectId, m.audienceId), value: m });
      }
      await producer.send(Topics.audience, messages);
    };
    const sends = Math.ceil(total / o.batch);
    /** The whole backlog first (the drain), or paced sends once probes is up (--rate); resolves at the last send. */
    const produce = async (): Promise<number> => {
      const started = Date.now();
      if (o.rate) {
        for (let s = 0; s < sends; s++) {
          const due = started + (s * o.batch * 1000) / o.rate;
          if (due > Date.now()) await sleep(due - Date.now());
          await send(s);
        }
      } else await pooled(sends, o.producers, send);
      ctx.log(`produced ${total} snapshots in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      const dropped = await droppedMessages(kafka.brokers, Topics.audience);
      if (dropped > 0) throw new Error(`the dev broker dropped ${dropped} of the ${total} snapshots (5 MB per partition): use fewer --contacts or more --partitions`);
      return Date.now();
    };
    let lastSend: Promise<number> | undefined;
    if (!o.rate) lastSend = Promise.resolve(await produce());

    const port = await freePort();
    const probes = startApp(
      o.root,
      'probes',
      {
        ...process.env,
        PORT: String(port),
        LOG_LEVEL: 'warn',
        ...generatePrincipalKeys(['probes']),
        MELD_POSTGRES_URL: o.pgUrl,
        MELD_KAFKA_BROKERS: kafka.brokers.join(','),
        MELD_CLICKHOUSE_DB: o.store.database,
        MELD_PROBES_EVENTS_GROUP: `bench-events-${b.tag}`,
        MELD_PROBES_AUDIENCE_GROUP: `bench-audience-${b.tag}`,
      },
      o.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${o.profileDir}`] : [],
    );
    try {
      // Polled from the start, not once /readyz answers: the sink drains thousands of snapshots
      // in its first second, which would otherwise fall before the first look.
      let failed: Error | undefined;
      const ready = waitReady(`http://127.0.0.1:${port}/readyz`).catch((err: Error) => void (failed = err));
      if (o.rate) {
        await ready;
        lastSend = produce();
        lastSend.catch((err: Error) => void (failed = err));
      }
      const chPid = stackPid(ctx.root, 'clickhouse');
      const chCpu = () => (chPid ? processCpuUs(chPid) : Number.NaN);
      const sampler = new RssSampler([
        { name: 'probes', pid: probes.pid! },
        { name: 'kafka', pid: kafka.pid },
      ]).start();
      // Messages whose state is current: a contact at step version v has had its v messages handled (the backlog sends them in order).
      const states = async () =>
        Number((await o.store.ch.query<{ n: string }>(sql`SELECT toString(sum(sign * bitAnd(version, 1048575))) AS n FROM audience_snapshot WHERE project_id = ${b.projectId} AND deleted = 0`))[0].n);
      const lastStep = (BigInt(Date.parse(b.at[b.versions])) * 2n + 1n).toString(); // the live membership rows of the last step (membershipVersion)
      const expectedMembers = b.contacts + Math.ceil(b.contacts / 5);
      const lastMembers = async () =>
        Number(
          (await o.store.ch.query<{ n: string }>(sql`SELECT toString(uniqExact(data_source_id, user_id)) AS n FROM audience_membership WHERE project_id = ${b.projectId} AND version = toUInt64(${lastStep})`))[0].n,
        );
      let first: { t: bigint; n: number; cpu: number; ch: number } | undefined;
      let seen = 0;
      let lastChange = Date.now();
      for (;;) {
        const n = await states();
        const t = process.hrtime.bigint();
        if (n > 0 && !first) first = { t, n, cpu: processCpuUs(probes.pid!), ch: chCpu() };
        if (failed) throw failed;
        if (n >= total && (await lastMembers()) >= expectedMembers) {
          const end = process.hrtime.bigint();
          await ready;
          const lagMs = Date.now() - (await lastSend!);
          if (first!.n >= total) throw new Error('every snapshot was visible at the first look: too few --contacts to time the drain');
          const drained = total - first!.n;
          const s = Number(end - first!.t) / 1e9;
          return { snapshotsPerS: drained / s, probesCpuUs: (processCpuUs(probes.pid!) - first!.cpu) / drained, clickhouseCpuUs: (chCpu() - first!.ch) / drained, lagMs, rssMb: sampler.stop() };
        }
        if (n !== seen) {
          if (Math.floor(n / 10_000) !== Math.floor(seen / 10_000)) ctx.log(`${n} snapshots visible`);
          [seen, lastChange] = [n, Date.now()];
        }
        if (Date.now() - lastChange > 60_000) throw new Error(`audience sink stuck at ${n}/${total} snapshots for 60 s`);
        await sleep(50);
      }
    } finally {
      await stopApp(probes);
    }
  } finally {
    await producer.disconnect().catch(() => undefined);
    await kafka.stop();
  }
}

interface CatalogueEntry {
  uid: string;
  type: AttributeType;
  multivalue: boolean;
  slot: number | null;
}

async function catalogue(db: DataSource, projectId: string): Promise<CatalogueEntry[]> {
  return db.query(`SELECT uid, type, multivalue, slot FROM attributes WHERE project_id = $1`, [projectId]);
}

/**
 * An `audience_contacts` row of a snapshot as the sink encodes it (typed by the catalogue, one
 * entry per value, the slot columns and the channels): written here from the message, as a
 * client of the table would, not with the sink's code.
 */
function contactRow(m: Extract<AudienceChange, { kind: 'snapshot' }>, types: ReadonlyMap<string, CatalogueEntry>, slotted: readonly CatalogueEntry[]): Record<string, unknown> {
  const row = {
    project_id: m.projectId,
    audience_id: m.audienceId,
    version: ((BigInt(Date.parse(m.at)) << 20n) + BigInt(m.version)).toString(),
    deleted: 0,
    str_keys: [] as string[],
    str_values: [] as string[],
    num_keys: [] as string[],
    num_values: [] as number[],
    channels: [] as string[],
    updated_at: Math.floor(Date.parse(m.at) / 1000),
  };
  const attributes: Record<string, unknown> = { ...m.attributes, _datasources: m.dataSources };
  for (const key of Object.keys(attributes).sort()) {
    const type = types.get(key)?.type;
    for (const value of [attributes[key]].flat() as Array<string | number | boolean>) {
      if (type === 'date' && typeof value === 'string') {
        row.num_keys.push(key);
        row.num_values.push(Date.parse(`${value}T00:00:00Z`) / 1000);
      } else if (type === 'datetime' && typeof value === 'string') {
        row.num_keys.push(key);
        row.num_values.push(Math.floor(Date.parse(value) / 1000));
      } else if (typeof value === 'string') {
        row.str_keys.push(key);
        row.str_values.push(value);
      } else {
        row.num_keys.push(key);
        row.num_values.push(typeof value === 'boolean' ? Number(value) : value);
      }
    }
  }
  const phone = m.attributes._phone_mobile;
  const email = m.attributes._email;
  row.channels = [...(typeof phone === 'string' && isMobile(phone, 'en_US') ? PHONE_CHANNELS : []), ...(typeof email === 'string' && isEmail(email) ? ['email'] : [])].sort();
  return Object.assign(row, slotValues(row, slotted.map((a) => ({ uid: a.uid, type: a.type, multivalue: a.multivalue, slot: a.slot }))));
}

async function rawInsert(ch: ClickHouse, table: string, b: Backlog, attributes: CatalogueEntry[], batch: number): Promise<Drain> {
  await ch.command(`CREATE TABLE ${table} AS audience_contacts`);
  const types = new Map(attributes.map((a) => [a.uid, a]));
  const slotted = attributes.filter((a) => a.slot !== null);
  const total = b.contacts * b.versions;
  const cpu0 = selfCpuUs();
  const t0 = process.hrtime.bigint();
  for (let from = 0; from < total; from += batch) {
    const rows = [];
    for (let i = from; i < Math.min(total, from + batch); i++) rows.push(contactRow(message(b, i) as Extract<AudienceChange, { kind: 'snapshot' }>, types, slotted));
    await ch.insert(table, rows);
  }
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  return { snapshotsPerS: total / s, probesCpuUs: (selfCpuUs() - cpu0) / total, clickhouseCpuUs: Number.NaN, lagMs: Number.NaN, rssMb: {} };
}
