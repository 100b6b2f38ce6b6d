/**
 * Idle cost of the apps (issue 20 item 4, ADRs 0216, 0260): starts every built app on a private
 * development broker and the stores of the environment, lets them settle, then reads each
 * process's CPU time (/proc/PID/stat) over a window with no traffic at all. After the window,
 * `--writes` contacts are written through the gateway, each after `--seconds` of rest, and
 * timed until the merged contact answers its lookup and until the audience count includes it.
 *
 *   node -r @swc-node/register bench/idle.ts [--seconds 60] [--settle 150] [--writes 2] [--bare-broker] [--profile-dir DIR]
 *
 * `--bare-broker` runs the development broker without its long-poll proxy (ADR 0260): the
 * consumers then fetch every 100 ms, as before it. `--profile-dir` adds a V8 CPU profile per
 * app (written when the apps stop) to see where the idle time goes; the profiler's own 1 kHz
 * sampling thread then dominates the wakeups and adds CPU.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { allTopicNames } from '../libs/contracts/src';
import appTable from '../libs/contracts/src/apps.json';
import { OrganizationEntity, createDataSource } from '../libs/db/src';
import { Args } from './lib/args';
import { processCpuUs } from './lib/cpu';
import { timeFirstWrite } from './lib/first-write';
import { startMeldApps } from './lib/meld-apps';
import { startPrivateKafka } from './lib/private-kafka';
import { createBenchTenant } from './lib/tenant';

/** Times the process was woken (voluntary context switches): timers and sockets, whatever the box's load. */
function wakeups(pid: number): number {
  const m = /voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : Number.NaN;
}

async function main(): Promise<void> {
  const args = new Args(process.argv.slice(2));
  const seconds = args.int('seconds', 60);
  // 150 s: every app spends one or two bursts of 100-200 ms of GC between 30 s and ~2 min after it
  // starts (V8 shrinking the start-up heap), one-offs that a shorter settle leaves in the window or not.
  const settle = args.int('settle', 150);
  const writes = args.int('writes', 2);
  const profileDir = args.string('profile-dir');
  const root = join(__dirname, '..');
  const log = (m: string): void => void process.stderr.write(`[idle] ${m}\n`);
  const postgresUrl = process.env.MELD_POSTGRES_URL;
  if (!postgresUrl) throw new Error('MELD_POSTGRES_URL not set: export the MELD_* variables of the stack first');
  // The tenant of the timed writes, written before the apps start and removed at the end.
  const db = await createDataSource({ url: postgresUrl, applicationName: 'meld-bench', poolSize: 1 }).initialize();
  const tenant = await createBenchTenant(db, {
    name: `bench-idle-${randomBytes(4).toString('hex')}`,
    dataSources: 1,
    productScopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_FULL'],
  });
  const kafka = await startPrivateKafka(root, allTopicNames(), 4, log, { longPoll: !args.flag('bare-broker') });
  const apps = await startMeldApps(root, Object.keys(appTable), { ...process.env, MELD_KAFKA_BROKERS: kafka.brokers.join(',') }, { profileDir });
  try {
    log(`apps ready; settling ${settle} s, then measuring ${seconds} s`);
    await new Promise((r) => setTimeout(r, settle * 1000));
    const watched = [...apps.processes, { name: 'kafka-dev-broker', pid: kafka.pid }];
    const before = watched.map((p) => ({ cpu: processCpuUs(p.pid), wakeups: wakeups(p.pid) }));
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const rows = watched.map((p, i) => ({
      name: p.name,
      pct: ((processCpuUs(p.pid) - before[i].cpu) / (seconds * 1e6)) * 100,
      wakeupsPerS: (wakeups(p.pid) - before[i].wakeups) / seconds,
    }));
    const apps_ = rows.filter((r) => r.name !== 'kafka-dev-broker');
    for (const r of rows) process.stdout.write(`${r.name.padEnd(18)} ${r.pct.toFixed(2)}% of one core, ${r.wakeupsPerS.toFixed(0)} wakeups/s\n`);
    process.stdout.write(`${'apps total'.padEnd(18)} ${apps_.reduce((s, r) => s + r.pct, 0).toFixed(2)}% of one core\n`);
    for (let n = 1; n <= writes; n++) {
      if (n > 1) await new Promise((r) => setTimeout(r, seconds * 1000));
      const w = await timeFirstWrite(apps.urls.gateway, tenant, n);
      process.stdout.write(`write after ${seconds} s of rest: readable in ${w.readableMs.toFixed(0)} ms, counted in ${w.countedMs.toFixed(0)} ms\n`);
    }
  } finally {
    await apps.stop();
    await kafka.stop();
    await db.getRepository(OrganizationEntity).delete({ id: tenant.organizationId });
    await db.destroy();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`idle failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
