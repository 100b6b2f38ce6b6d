/**
 * ingest-contacts (ADR 0030, ADR 0093): `POST …/stream/contacts` through the gateway (ingest: validation,
 * `source_contacts` upsert, outbox → meld.contacts.v1) and on through identity-merge (merge
 * step → audience contacts), until every contact is merged and searchable, vs a raw batched
 * Postgres upsert of the same rows in the same run.
 *
 * Data: --contacts N (200,000) over two data sources (N/2 each, written in alternating batches
 * of --batch, --clients at once); --shared (30)% of the contacts share their email with one
 * contact of the other source, so identity-merge merges those pairs: N − N×shared/200 audience
 * contacts at the end.
 *
 * Figures: accepted contacts/s (N / time to the last 202), end-to-end contacts/s (N / time
 * until every source contact is applied by identity-merge, i.e. has its `audience_members`
 * row, checked against the expected number of audience contacts), merge lag p50/p99: the time
 * from a batch's 202 until `GET …/audience/search/email/{email}` through the gateway returns
 * an audience contact listing its last contact (for a shared email: merged with its pair, when
 * the pair was written first). At peak the clients outrun the merge, so that lag is the
 * backlog (two samples every --sample-every batches, few: each sample polls the search through
 * gateway and audience until it is found, CPU the measured path then lacks — at 20 the polling
 * took a quarter of all CPU at peak); the lag the goal is about is measured
 * afterwards at half of the merged peak: an open loop (a batch every 1/rate s) for
 * --lag-seconds, every batch sampled.
 * Baseline: the same rows upserted into a plain table shaped like `source_contacts`
 * (`INSERT … ON CONFLICT DO UPDATE`, one statement per batch, --clients connections).
 *
 * The bench starts gateway, ingest, identity-merge and audience from the built apps on free
 * ports, a private development broker, and a Postgres database of its own (migrated, dropped at
 * the end). CPU per contact: each process's CPU time over the phase / contacts.
 *
 * Options: --contacts N (200000), --batch B (100), --clients C (16), --shared P (30),
 * --sample-every K (200), --half-sample-every K (4), --rounds R (1), --lag-seconds S (30), --warmup S (2), --partitions K,
 * --profile DIR.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { Pool as PgPool } from 'pg';
import { Pool } from 'undici';
import { TOPIC_PARTITIONS, Topics, allTopicNames } from '../../libs/contracts/src';
import type { BenchContext, BenchRow, ScenarioResult } from '../lib/context';
import { CpuMeter, type MeteredProcess } from '../lib/cpu';
import { closedLoopOver, openLoop } from '../lib/load';
import { startMeldApps } from '../lib/meld-apps';
import { benchPostgres } from '../lib/postgres-db';
import { settleStores } from '../lib/settle';
import { delta, scrapeMetrics } from '../lib/tail-metrics';
import { startPrivateKafka } from '../lib/private-kafka';
import { RssSampler, type WatchedProcess } from '../lib/processes';
import { median, percentile } from '../lib/stats';
import { formatNumber } from '../lib/table';
import { cpuBreakdown, perOp, phaseRow, requireEnv, type Phase } from '../lib/phase';
import { createBenchTenant } from '../lib/tenant';

interface Contact {
  source: number;
  userId: string;
  email: string;
}

interface Round {
  accepted: Phase;
  endToEnd: Phase;
  raw: Phase;
  /** Merge lag of the sampled contacts, ms. */
  lag: Phase;
  lagSamples: number;
  /** Samples never found within 30 min. */
  lagLost: number;
  audienceContacts: number;
}

export async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const contacts = ctx.args.int('contacts', 200_000);
  const batch = ctx.args.int('batch', 100);
  const clients = ctx.args.int('clients', 16);
  const sharedPct = ctx.args.int('shared', 30);
  const sampleEvery = ctx.args.int('sample-every', 200);
  const halfSampleEvery = ctx.args.int('half-sample-every', 4);
  const lagSeconds = ctx.args.int('lag-seconds', 30);
  const warmup = ctx.args.int('warmup', 2);
  const rounds = ctx.args.int('rounds', 1);
  const partitions = ctx.args.int('partitions', TOPIC_PARTITIONS);
  const profileDir = ctx.args.string('profile');
  const env = requireEnv(['MELD_POSTGRES_URL', 'MELD_REDIS_URL'], 'ingest-contacts');
  const loadBefore = loadavg();
  const suffix = randomBytes(4).toString('hex');
  // The dev broker keeps 5 MB per partition and silently drops older messages; a contact
  // message is ~600 bytes, and identity-merge may fall far behind ingest. A dropped message is
  // a contact never merged (it only wakes the merge up), so meld.contacts.v1 gets enough
  // partitions to hold the whole run (4 MB each, to stay clear of the limit).
  const contactPartitions = Math.max(partitions, Math.ceil((contacts * 600) / 4_000_000));
  const topics = allTopicNames().map((t) => (t === Topics.contacts ? `${t}:${contactPartitions}` : t));
  const kafka = await startPrivateKafka(ctx.root, topics, partitions, ctx.log);
  const pg = await benchPostgres(env.MELD_POSTGRES_URL, `meld_bench_${suffix}`);
  let pool: Pool | undefined;
  let rawPool: PgPool | undefined;
  let apps: Awaited<ReturnType<typeof startMeldApps>> | undefined;
  try {
    const tenant = await createBenchTenant(pg.db, {
      name: `bench-contacts-${suffix}`,
      dataSources: 2,
      productScopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_FULL'],
    });
    apps = await startMeldApps(
      ctx.root,
      ['ingest', 'identity-merge', 'audience', 'gateway'],
      { ...process.env, MELD_POSTGRES_URL: pg.url, MELD_KAFKA_BROKERS: kafka.brokers.join(',') },
      {
        profileDir,
        perApp: {
          gateway: {
            MELD_RATE_LIMITS: JSON.stringify({ ingest: { limit: 1_000_000_000 }, standard: { limit: 1_000_000_000 }, large: { limit: 1_000_000_000 } }),
            MELD_RATE_LIMIT_NAMESPACE: `bench-${suffix}`,
          },
        },
      },
    );
    const gateway = new Pool(apps.urls.gateway, { connections: clients * 2, pipelining: 1, keepAliveTimeout: 30_000 });
    pool = gateway;
    rawPool = new PgPool({ connectionString: pg.url, max: clients, application_name: 'meld-bench-raw' });
    const rawDb = rawPool;
    await rawDb.query(
      `CREATE TABLE bench_contacts_raw (project_id uuid NOT NULL, data_source_id uuid NOT NULL, user_id text NOT NULL, attributes jsonb NOT NULL, version bigint NOT NULL DEFAULT 1, PRIMARY KEY (project_id, data_source_id, user_id))`,
    );

    const perSource = Math.floor(contacts / 2);
    const sharedPairs = Math.floor((contacts * sharedPct) / 200);
    const batchesPerSource = Math.ceil(perSource / batch);
    const batches = batchesPerSource * 2;
    /** Batch b: source b % 2, contacts [from, from + count) of that source (pairs share an index). */
    const batchContacts = (round: number, b: number): Contact[] => {
      const source = b % 2;
      const from = Math.floor(b / 2) * batch;
      const out: Contact[] = [];
      for (let i = from; i < Math.min(perSource, from + batch); i++) {
        const userId = `r${round}-${source ? 'b' : 'a'}-${i}`;
        out.push({ source, userId, email: i < sharedPairs ? `r${round}-shared-${i}@bench.example` : `${userId}@bench.example` });
      }
      return out;
    };
    const body = (cs: Contact[]) => JSON.stringify(cs.map((c) => ({ _user_id: c.userId, _email: c.email, _first_name: `First ${c.userId}` })));
    const ingestHeaders = tenant.dataSources.map((d) => ({ authorization: `Bearer ${d.token}`, 'content-type': 'application/json' }));
    const streamPath = (source: number) => `/v1/project/${tenant.project.uid}/datasource/${tenant.dataSources[source].id}/stream/contacts`;
    const searchHeaders = { authorization: `Bearer ${tenant.productToken}` };
    const dsContactId = (c: Contact) => `${tenant.dataSources[c.source].id}/${c.userId}`;

    /**
     * Polls the search by `c`'s email until the audience contact lists every id of `need`; ms
     * from `since`. Under a saturating load the lag is the merge backlog, minutes long: a
     * sample is never cut short (that would drop the slowest from the percentiles), only given
     * up after 30 min (NaN, counted in the notes).
     */
    const lagOf = async (c: Contact, need: string[], since: bigint): Promise<number> => {
      const deadline = Date.now() + 30 * 60_000;
      while (Date.now() < deadline) {
        const res = await gateway.request({ method: 'GET', path: `/v1/project/${tenant.project.uid}/audience/search/email/${encodeURIComponent(c.email)}`, headers: searchHeaders });
        if (res.statusCode === 200) {
          const found = (await res.body.json()) as { entity?: { _ds_contact_ids?: string[] } };
          const ids = found.entity?._ds_contact_ids ?? [];
          if (need.every((id) => ids.includes(id))) return Number(process.hrtime.bigint() - since) / 1e6;
        } else await res.body.dump();
        // Poll often while the lag is short, less as it grows (resolution ≤ 5% of it or 50 ms, ≤ 1 s).
        const elapsedMs = Number(process.hrtime.bigint() - since) / 1e6;
        await new Promise((r) => setTimeout(r, Math.min(1000, Math.max(50, elapsedMs / 20))));
      }
      return Number.NaN;
    };

    const metered: MeteredProcess[] = [{ name: 'bench', pid: process.pid }, ...apps.processes, { name: 'kafka', pid: kafka.pid }, { name: 'postgres', pids: () => pg.backendPids() }];
    const watched: WatchedProcess[] = [{ name: 'bench', pid: process.pid }, ...apps.processes, { name: 'kafka', pid: kafka.pid }];
    ctx.log(`${rounds} round(s) of ${contacts} contacts over 2 data sources (${sharedPairs} pairs share an email): ${clients} clients × ${batch} per batch`);

    /**
     * Posts batch b of `round`; once accepted, samples the merge lag of its last contact into
     * `lags` when given. Batch b ^ 1 holds its pair (same index, other source), which shares
     * its email while indexes are below sharedPairs: the sample then waits for the merge too
     * when the pair was accepted first. Resolves to the contacts accepted (0 on an error).
     */
    const postBatch = async (round: number, b: number, accepted: Set<number>, lags?: Array<Promise<number>>): Promise<number> => {
      const cs = batchContacts(round, b);
      const res = await gateway.request({ method: 'POST', path: streamPath(b % 2), headers: ingestHeaders[b % 2], body: body(cs) });
      await res.body.dump();
      if (res.statusCode !== 202) return 0;
      const since = process.hrtime.bigint();
      accepted.add(b);
      if (lags) {
        const c = cs[cs.length - 1];
        const pair = batchContacts(round, b ^ 1).find((p) => p.email === c.email);
        const need = [dsContactId(c), ...(pair && accepted.has(b ^ 1) ? [dsContactId(pair)] : [])];
        lags.push(lagOf(c, need, since));
      }
      return cs.length;
    };

    const results: Round[] = [];
    for (let round = 0; round < rounds; round++) {
      const applied = async () => {
        const {
          rows: [r],
        } = await rawDb.query<{ n: string }>(`SELECT count(*) AS n FROM audience_members WHERE project_id = $1 AND user_id LIKE $2`, [tenant.project.id, `r${round}-%`]);
        return Number(r.n);
      };
      const cpu = await new CpuMeter(metered).start();
      const rss = new RssSampler(watched).start();
      const t0 = process.hrtime.bigint();
      const lags: Array<Promise<number>> = [];
      const acceptedBatches = new Set<number>();
      let acceptedCount = 0;
      let loadDone = false;
      let cpuAccepted: Record<string, number> = {};
      const load = closedLoopOver(clients, batches, async (b) => {
        const n = await postBatch(round, b, acceptedBatches, b % sampleEvery < 2 ? lags : undefined);
        acceptedCount += n;
        return n > 0;
      }).then(async (r) => {
        loadDone = true;
        cpuAccepted = await cpu.stop();
        return r;
      });
      let seen = 0;
      let lastChange = Date.now();
      while (!loadDone || seen < acceptedCount) {
        await new Promise((r) => setTimeout(r, 500));
        const n = await applied();
        if (n !== seen) [seen, lastChange] = [n, Date.now()];
        if (loadDone && Date.now() - lastChange > 120_000) throw new Error(`only ${n} of ${acceptedCount} accepted contacts merged after 120 s without progress`);
      }
      const endToEndS = Number(process.hrtime.bigint() - t0) / 1e9;
      const cpuEndToEnd = await cpu.stop();
      const rssMb = rss.stop();
      const peak = await load;
      const lagAll = await Promise.all(lags);
      const lagValues = lagAll.filter((v) => Number.isFinite(v));
      const {
        rows: [audience],
      } = await rawDb.query<{ n: string }>(
        `SELECT count(DISTINCT m.audience_id) AS n FROM audience_members m WHERE m.project_id = $1 AND m.user_id LIKE $2`,
        [tenant.project.id, `r${round}-%`],
      );
      const accepted: Phase = { perS: acceptedCount / peak.elapsedS, p50: percentile(peak.latencies, 50), p99: percentile(peak.latencies, 99), errors: peak.errors, cpu: perOp(cpuAccepted, acceptedCount), rssMb };
      const endToEnd: Phase = { ...accepted, perS: acceptedCount / endToEndS, p50: Number.NaN, p99: Number.NaN, cpu: perOp(cpuEndToEnd, acceptedCount) };
      const lag: Phase = { perS: Number.NaN, p50: percentile(lagValues, 50), p99: percentile(lagValues, 99), errors: 0, cpu: {}, rssMb: {} };
      ctx.log(
        `round ${round + 1}: accepted ${accepted.perS.toFixed(0)} contacts/s (p50 ${accepted.p50.toFixed(1)} ms, p99 ${accepted.p99.toFixed(1)} ms), end-to-end ${endToEnd.perS.toFixed(0)} contacts/s, ` +
          `merge lag p50 ${lag.p50.toFixed(0)} ms p99 ${lag.p99.toFixed(0)} ms (${lagValues.length} samples), ${audience.n} audience contacts`,
      );

      // The baseline: the same rows, one upsert statement per batch.
      const rawCpu = await new CpuMeter(metered).start();
      const rawRss = new RssSampler(watched).start();
      const rawRun = await closedLoopOver(clients, batches, async (b) => {
        const cs = batchContacts(round, b);
        await rawDb.query(
          `INSERT INTO bench_contacts_raw AS c (project_id, data_source_id, user_id, attributes)
           SELECT $1, $2, u, a FROM unnest($3::text[], $4::jsonb[]) AS t(u, a)
           ON CONFLICT (project_id, data_source_id, user_id) DO UPDATE SET attributes = c.attributes || EXCLUDED.attributes, version = c.version + 1`,
          [tenant.project.id, tenant.dataSources[b % 2].id, cs.map((c) => c.userId), cs.map((c) => JSON.stringify({ _user_id: c.userId, _email: c.email, _first_name: `First ${c.userId}` }))],
        );
        return true;
      });
      const upserted = perSource * 2;
      const raw: Phase = {
        perS: upserted / rawRun.elapsedS,
        p50: percentile(rawRun.latencies, 50),
        p99: percentile(rawRun.latencies, 99),
        errors: rawRun.errors,
        cpu: perOp(await rawCpu.stop(), upserted),
        rssMb: rawRss.stop(),
      };
      ctx.log(`round ${round + 1}: raw Postgres upsert ${raw.perS.toFixed(0)} rows/s (p50 ${raw.p50.toFixed(1)} ms, p99 ${raw.p99.toFixed(1)} ms)`);
      const r: Round = { accepted, endToEnd, raw, lag, lagSamples: lagValues.length, lagLost: lagAll.length - lagValues.length, audienceContacts: Number(audience.n) };
      results.push(r);
    }

    // Merge lag at a load the merge keeps up with: half of the merged peak, every
    // --half-sample-every-th batch sampled (each sample polls the search until it is found:
    // sampling every batch made the polling itself the load the merge fell behind on).
    const settled = await settleStores({ postgres: pg.db });
    ctx.log(settled);
    const halfRate = (median(results.map((r) => r.endToEnd.perS)) * 0.5) / batch;
    const halfLags: Array<Promise<number>> = [];
    const halfAccepted = new Set<number>();
    let halfNext = 0;
    const halfStart = process.hrtime.bigint();
    ctx.log(`merge lag at half of the merged peak: ${(halfRate * batch).toFixed(0)} contacts/s for ${lagSeconds} s after ${warmup} s of warm-up`);
    const scrape = () => Promise.all(['ingest', 'identity-merge'].map((a) => scrapeMetrics(apps!.urls[a])));
    const beforeHalf = await scrape();
    // Mid-phase: how far behind each stage is while the load runs (gauges).
    const midHalf = new Promise<Awaited<ReturnType<typeof scrape>>>((resolve) => setTimeout(() => void scrape().then(resolve), (warmup + lagSeconds / 2) * 1000));
    const halfRun = await openLoop(halfRate, lagSeconds, warmup, async () => {
      const b = halfNext++;
      if (b >= batches) return false;
      const measuring = Number(process.hrtime.bigint() - halfStart) / 1e9 >= warmup;
      return (await postBatch(rounds, b, halfAccepted, measuring && b % halfSampleEvery === 0 ? halfLags : undefined)) > 0;
    });
    const [afterHalf, mid] = [await scrape(), await midHalf];
    const steps = delta(beforeHalf[1], afterHalf[1], 'meld_merge_step_contacts_count');
    const stepContacts = delta(beforeHalf[1], afterHalf[1], 'meld_merge_step_contacts_sum');
    const stepSeconds = delta(beforeHalf[1], afterHalf[1], 'meld_merge_step_seconds_sum');
    const stages =
      `mid-phase: ingest outbox ${delta(null, mid[0], 'meld_outbox_depth')} rows behind (oldest ${delta(null, mid[0], 'meld_outbox_lag_seconds').toFixed(1)} s), ` +
      `identity-merge ${delta(null, mid[1], 'meld_kafka_consumer_lag', Topics.contacts)} messages behind on ${Topics.contacts}; ` +
      `${steps} merge steps of ${(stepContacts / steps).toFixed(1)} contacts on average, ${((stepSeconds / steps) * 1000).toFixed(1)} ms each (${((stepSeconds * 1e6) / stepContacts).toFixed(0)} µs of step per contact)`;
    ctx.log(stages);
    const halfLagAll = await Promise.all(halfLags);
    const halfLagValues = halfLagAll.filter((v) => Number.isFinite(v));
    const halfLag: Phase = { perS: Number.NaN, p50: percentile(halfLagValues, 50), p99: percentile(halfLagValues, 99), errors: halfRun.errors, cpu: {}, rssMb: {} };
    ctx.log(`merge lag at half of the merged peak: p50 ${halfLag.p50.toFixed(0)} ms, p99 ${halfLag.p99.toFixed(0)} ms (${halfLagValues.length} samples)`);

    const ingestNames = ['gateway', 'ingest', 'postgres', 'kafka'];
    const all = ['gateway', 'ingest', 'identity-merge', 'audience', 'kafka', 'postgres'];
    const rawNames = ['bench', 'postgres'];
    const baseline = 'raw Postgres upsert';
    const rows: BenchRow[] = [
      phaseRow('accepted through gateway + ingest', results.map((r) => r.accepted), ingestNames, baseline),
      phaseRow('end to end: merged (identity-merge)', results.map((r) => r.endToEnd), all, baseline),
      phaseRow('merge lag at peak (the backlog)', results.map((r) => r.lag), []),
      phaseRow(`merge lag at ${formatNumber(halfRate * batch)} contacts/s (half of merged peak)`, [halfLag], []),
      phaseRow(baseline, results.map((r) => r.raw), rawNames),
    ];
    const expectedAudience = perSource * 2 - sharedPairs;
    const e2e = rows[1].throughput;
    const lag99 = halfLag.p99;
    const loadAfter = loadavg();
    return {
      title: `ingest-contacts: ${perSource * 2} contacts over 2 data sources (${sharedPct}% share an email), batches of ${batch}, ${clients} clients: gateway → ingest → Kafka → identity-merge vs a raw Postgres upsert`,
      units: {
        throughput: 'contacts/s',
        latency: 'one batch, client side; merge lag: a sampled contact, from its 202 to the search finding it (merged)',
        cpu: 'µs per contact: gateway+ingest+postgres+kafka (accepted), every process of the path (end to end), bench+postgres (raw)',
      },
      rows,
      notes: [
        `goal end-to-end ≥ 2,000 contacts/s: ${formatNumber(e2e)} ${e2e >= 2000 ? 'MET' : 'MISSED'}; goal merge lag p99 ≤ 2 s (at half of the merged peak, ${formatNumber(halfRate * batch)} contacts/s): ${formatNumber(lag99)} ms ${lag99 <= 2000 ? 'MET' : 'MISSED'}; before that phase Postgres ${settled}; one batch in ${halfSampleEvery} sampled`,
        `half-peak phase: ${stages}`,
        `audience contacts at the end: ${results.map((r) => r.audienceContacts).join(', ')} (expected ${expectedAudience}); lag samples at peak per round: ${results.map((r) => `${r.lagSamples}${r.lagLost ? ` (+${r.lagLost} never found)` : ''}`).join(', ')}, at half of peak: ${halfLagValues.length}${halfLagAll.length > halfLagValues.length ? ` (+${halfLagAll.length - halfLagValues.length} never found)` : ''}`,
        `broker: ${contactPartitions} partitions for meld.contacts.v1 (so the dev broker's 5 MB per partition holds the whole backlog), ${partitions} for the others`,
        cpuBreakdown('CPU µs/contact by process, end to end (round 1)', results[0].endToEnd.cpu),
        cpuBreakdown('CPU µs/contact by process, raw upsert (round 1)', results[0].raw.cpu),
        `failed batches: ${results.reduce((n, r) => n + r.accepted.errors + r.raw.errors, halfLag.errors)}`,
        `load average (1/5/15 min) before: ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after: ${loadAfter.map((l) => l.toFixed(2)).join(' ')}`,
        'one machine (2 cores): bench clients, gateway, ingest, identity-merge, audience, Postgres, Redis and the Kafka dev broker share it',
      ],
    };
  } finally {
    await pool?.close();
    await apps?.stop();
    await rawPool?.end();
    await kafka.stop();
    await pg.drop();
  }
}
