import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { testEnv } from '@meld/testing';

const ROOT = join(__dirname, '../../..');
/** Apps on 29880-29888, the gateway's operations port on 29980: no suite's own system uses them. */
export const SHARED_GATEWAY_PORT = 29880;
/** The shared system's gateway, known before it starts (suites build their clients at load). */
export const SHARED_BASE = `http://127.0.0.1:${SHARED_GATEWAY_PORT}`;

/** The gateway's token cache: a revoked OAuth token stops working within this (oauth e2e). */
export const SHARED_GATEWAY_CACHE_TTL_MS = 1000;
/** Settings of the suites that share the system, each named by the suite that needs it. */
const SHARED_SETTINGS = {
  MELD_GATEWAY_CACHE_TTL_MS: String(SHARED_GATEWAY_CACHE_TTL_MS),
  // sms-webhooks: probes store the SMS timeline events it counts without the default linger.
  MELD_PROBES_EVENTS_LINGER_MS: '200',
};

export interface SharedSystem {
  base: string;
  gatewayPort: number;
  /** The system's private Kafka broker. */
  brokers: string;
  /** Its own Postgres database (migrated; dropped when it stops). */
  postgresUrl: string;
  /** Its private SMSC simulator: SMPP, and the control port for mobile-originated messages. */
  smppUrl: string;
  controlUrl: string;
}

/**
 * One system (the eight apps as processes on stores of their own: a Postgres database, a Redis
 * database, a Kafka broker and an SMSC simulator) for every e2e suite of this Jest process that
 * needs no settings of its own (ADR 0352). The first suite to ask starts
 * it in a detached process that stops it when this Jest process exits; the next ones find it
 * ready. Suites keep to organizations of their own, so they do not see each other's data.
 */
export async function sharedSystem(): Promise<SharedSystem> {
  testEnv();
  const dir = join(ROOT, '.stack/e2e-shared');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${process.pid}.json`);
  if (existsSync(file)) {
    const running = JSON.parse(readFileSync(file, 'utf8')) as SharedSystem & { pid: number };
    if (alive(running.pid)) return waitReady(file, 60_000, null);
    rmSync(file, { force: true });
  }
  const log = join(ROOT, '.stack/logs/e2e-shared-daemon.log');
  mkdirSync(join(ROOT, '.stack/logs'), { recursive: true });
  const daemon = spawn(process.execPath, [join(__dirname, 'shared-system-daemon.js'), file, String(process.pid), String(SHARED_GATEWAY_PORT)], {
    cwd: ROOT,
    env: { ...process.env, ...SHARED_SETTINGS },
    detached: true,
    stdio: ['ignore', openSync(log, 'a'), openSync(log, 'a')],
  });
  daemon.unref();
  return waitReady(file, 180_000, { exited: () => daemon.exitCode !== null, log });
}

/** Waits until the file names a system whose gateway says every app is up (an app the supervisor is restarting may take a while). */
async function waitReady(file: string, timeoutMs: number, starting: { exited(): boolean; log: string } | null): Promise<SharedSystem> {
  const log = starting?.log ?? join(ROOT, '.stack/logs/e2e-shared');
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (starting?.exited()) throw new Error(`the shared e2e system did not start: see ${log}`);
    if (existsSync(file)) {
      const system = JSON.parse(readFileSync(file, 'utf8')) as SharedSystem;
      const res = await fetch(`${system.base}/healthz`, { signal: AbortSignal.timeout(5000) }).catch(() => null);
      if (res?.status === 200) return system;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the shared e2e system was not ready within ${timeoutMs / 1000} s: see ${log}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
