/**
 * Idle cost of the apps (issue 20 item 4, ADR 0216): starts every built app on a private
 * development broker and the stores of the environment, lets them settle, then reads each
 * process's CPU time (/proc/PID/stat) over a window with no traffic at all.
 *
 *   node -r @swc-node/register bench/idle.ts [--seconds 60] [--settle 15] [--profile-dir DIR]
 *
 * `--profile-dir` adds a V8 CPU profile per app (written when the apps stop) to see where
 * the idle time goes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { allTopicNames } from '../libs/contracts/src';
import appTable from '../libs/contracts/src/apps.json';
import { Args } from './lib/args';
import { processCpuUs } from './lib/cpu';
import { startMeldApps } from './lib/meld-apps';
import { startPrivateKafka } from './lib/private-kafka';

/** Times the process was woken (voluntary context switches): timers and sockets, whatever the box's load. */
function wakeups(pid: number): number {
  const m = /voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : Number.NaN;
}

async function main(): Promise<void> {
  const args = new Args(process.argv.slice(2));
  const seconds = args.int('seconds', 60);
  const settle = args.int('settle', 15);
  const profileDir = args.string('profile-dir');
  const root = join(__dirname, '..');
  const log = (m: string): void => void process.stderr.write(`[idle] ${m}\n`);
  const topics = allTopicNames();
  const kafka = await startPrivateKafka(root, topics, 4, log);
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
  } finally {
    await apps.stop();
    await kafka.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`idle failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
