/**
 * remerge (ADR 0331): how fast identity-merge merges a project's contacts again after its merging
 * attributes change, beside a raw Postgres upsert of as many member rows in the same run.
 *
 * Data: --contacts N (100,000) source contacts over two data sources, written straight to
 * `source_contacts` as ingest leaves them; --shared P (30)% share their email with one contact of
 * the other source. The project first merges on `_user_id` only: a re-merge request builds the
 * audience from scratch (phase 1, N audience contacts). Then `_email` becomes a merging attribute
 * (phase 2): the pairs merge, N − N×P/200 audience contacts. Then it is removed again (phase 3):
 * the pairs split. Each phase is timed from the request to its `done_at`, with the CPU of
 * identity-merge and of the database's Postgres backends per contact.
 * Baseline: the N member rows upserted into a plain table shaped like `audience_members`
 * (`INSERT … ON CONFLICT DO UPDATE`, 200 rows per statement, one connection: a re-merge step's size).
 *
 * The bench starts identity-merge from the built app on a private development broker and a
 * Postgres database of its own (migrated, dropped at the end).
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { allTopicNames, TOPIC_PARTITIONS } from '../../libs/contracts/src';
import type { BenchContext, BenchRow, ScenarioResult } from '../lib/context';
import { CpuMeter, type MeteredProcess } from '../lib/cpu';
import { startMeldApps } from '../lib/meld-apps';
import { benchPostgres } from '../lib/postgres-db';
import { requireEnv } from '../lib/phase';
import { startPrivateKafka } from '../lib/private-kafka';
import { createBenchTenant } from '../lib/tenant';

const STEP = 200;

export async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const contacts = ctx.args.int('contacts', 100_000);
  const shared = ctx.args.int('shared', 30);
  const env = requireEnv(['MELD_POSTGRES_URL'], 'remerge');
  const load = [loadavg()[0]];
  const suffix = randomBytes(4).toString('hex');
  const kafka = await startPrivateKafka(ctx.root, allTopicNames(), TOPIC_PARTITIONS, ctx.log);
  const pg = await benchPostgres(env.MELD_POSTGRES_URL, `meld_bench_${suffix}`);
  let apps: Awaited<ReturnType<typeof startMeldApps>> | undefined;
  try {
    const tenant = await createBenchTenant(pg.db, { name: `bench-remerge-${suffix}`, dataSources: 2, productScopes: [] });
    const projectId = tenant.project.id;
    const [a, b] = tenant.dataSources.map((d) => d.id);
    // Contact i of each source; the first P% of them share their email with the other source's i.
    const half = Math.floor(contacts / 2);
    const pairs = Math.floor((half * shared) / 100);
    for (const [source, tag] of [[a, 'a'], [b, 'b']] as const) {
      await pg.db.query(
        `INSERT INTO source_contacts (project_id, data_source_id, user_id, attributes, attribute_at, version)
         SELECT $1, $2, $3 || i, jsonb_build_object('_user_id', $3 || i, '_email', CASE WHEN i < $5 THEN 'shared' || i ELSE $3 || i END || '@example.com', '_first_name', 'First ' || i),
                jsonb_build_object('_user_id', now(), '_email', now(), '_first_name', now()), 1
           FROM generate_series(0, $4::int - 1) i`,
        [projectId, source, tag, half, pairs],
      );
    }
    await pg.db.query(`UPDATE projects SET merging_attributes = '{}' WHERE id = $1`, [projectId]);
    await pg.db.query(`ANALYZE source_contacts`);
    ctx.log(`${(half * 2).toLocaleString('en-US')} source contacts written, ${pairs.toLocaleString('en-US')} pairs sharing an email`);

    apps = await startMeldApps(ctx.root, ['identity-merge'], { ...process.env, MELD_POSTGRES_URL: pg.url, MELD_KAFKA_BROKERS: kafka.brokers.join(','), MELD_REMERGE_POLL_MS: '100' });
    const metered: MeteredProcess[] = [...apps.processes, { name: 'postgres', pids: () => pg.backendPids() }];

    const audienceContacts = async () => Number((await pg.db.query(`SELECT count(*)::int AS n FROM audience_contacts WHERE project_id = $1`, [projectId]))[0].n);
    const phase = async (name: string, attributes: string[], expected: number) => {
      const cpu = await new CpuMeter(metered).start();
      const t0 = performance.now();
      // What the gateway writes with the change (ProjectsRepository.update).
      await pg.db.transaction(async (em) => {
        await em.query(`UPDATE projects SET merging_attributes = $2 WHERE id = $1`, [projectId, attributes]);
        await em.query(
          `INSERT INTO remerge_requests (project_id, requested_at) VALUES ($1, clock_timestamp())
           ON CONFLICT (project_id) DO UPDATE SET requested_at = EXCLUDED.requested_at, cursor_data_source_id = NULL, cursor_user_id = NULL, contacts_done = 0, lease_until = NULL, done_at = NULL`,
          [projectId],
        );
      });
      let last = 0;
      for (;;) {
        const [row] = await pg.db.query(`SELECT contacts_done::int AS done, done_at IS NOT NULL AS finished FROM remerge_requests WHERE project_id = $1`, [projectId]);
        if (row.finished) break;
        if (row.done - last >= 20_000) {
          ctx.log(`${name}: ${row.done.toLocaleString('en-US')} contacts`);
          last = row.done;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      const seconds = (performance.now() - t0) / 1000;
      const used = await cpu.stop();
      const n = await audienceContacts();
      if (n !== expected) throw new Error(`${name}: ${n} audience contacts, ${expected} expected`);
      ctx.log(`${name}: ${(half * 2).toLocaleString('en-US')} contacts in ${seconds.toFixed(1)} s, ${n.toLocaleString('en-US')} audience contacts`);
      return { name, seconds, cpu: used };
    };
    const total = half * 2;
    const phases = [
      await phase('merge from scratch, on _user_id (first request)', [], total),
      await phase('merge again: _email added (pairs merge)', ['_email'], total - pairs),
      await phase('merge again: _email removed (pairs split)', [], total),
    ];

    // Baseline: the same number of member rows upserted, one statement per step's worth.
    await pg.db.query(`CREATE UNLOGGED TABLE bench_members_raw (project_id uuid, data_source_id uuid, user_id text, audience_id uuid, applied_version bigint, PRIMARY KEY (project_id, data_source_id, user_id))`);
    const rawCpu = await new CpuMeter(metered).start();
    const r0 = performance.now();
    for (let i = 0; i < total; i += STEP) {
      await pg.db.query(
        `INSERT INTO bench_members_raw AS m SELECT $1, CASE WHEN i % 2 = 0 THEN $2::uuid ELSE $3::uuid END, 'u' || i, gen_random_uuid(), 1 FROM generate_series($4::int, $5::int) i
         ON CONFLICT (project_id, data_source_id, user_id) DO UPDATE SET audience_id = EXCLUDED.audience_id, applied_version = m.applied_version + 1`,
        [projectId, a, b, i, Math.min(i + STEP, total) - 1],
      );
    }
    const rawSeconds = (performance.now() - r0) / 1000;
    const rawUsed = await rawCpu.stop();
    load.push(loadavg()[0]);

    const baseline = `raw Postgres upsert of ${total.toLocaleString('en-US')} member rows, ${STEP} per statement`;
    const cpuNote = (used: Record<string, number>) =>
      Object.entries(used)
        .map(([k, us]) => `${k} ${(us / total).toFixed(0)} µs`)
        .join(', ');
    const rows: BenchRow[] = [
      ...phases.map((p) => ({ name: p.name, throughput: total / p.seconds, p50Ms: Number.NaN, p99Ms: Number.NaN, cpuUsPerOp: Object.values(p.cpu).reduce((s, x) => s + x, 0) / total, peakRssMb: {}, baseline, runs: 1 })),
      { name: baseline, throughput: total / rawSeconds, p50Ms: Number.NaN, p99Ms: Number.NaN, cpuUsPerOp: Object.values(rawUsed).reduce((s, x) => s + x, 0) / total, peakRssMb: {}, runs: 1 },
    ];
    return {
      title: `remerge: ${total.toLocaleString('en-US')} source contacts merged again after a change of merging attributes (${pairs.toLocaleString('en-US')} pairs sharing an email)`,
      units: { throughput: 'source contacts/s (contacts / time from the request to done)', latency: 'n/a', cpu: 'CPU µs per source contact, identity-merge + Postgres' },
      rows,
      notes: [
        ...phases.map((p) => `${p.name}: ${p.seconds.toFixed(1)} s; CPU per contact ${cpuNote(p.cpu)}`),
        `baseline: ${rawSeconds.toFixed(1)} s; CPU per row ${cpuNote(rawUsed)}`,
        `steps of ${STEP} source contacts (REMERGE_STEP_CONTACTS), each an ordinary merge step holding the project's merge lock`,
        `load average (1 min) at start ${load[0].toFixed(1)}, at end ${load[1].toFixed(1)}`,
      ],
    };
  } finally {
    await apps?.stop();
    await pg.drop();
    await kafka.stop();
  }
}
