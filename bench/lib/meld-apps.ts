import type { ChildProcess } from 'node:child_process';
import { generatePrincipalKeys } from '../../libs/auth/src';
import { freePort, startApp, stopApp, waitReady } from './apps';
import type { WatchedProcess } from './processes';

export interface MeldApps {
  /** Base URL of each started app (`gateway` included when started). */
  urls: Record<string, string>;
  processes: WatchedProcess[];
  stop(): Promise<void>;
}

/**
 * Starts built apps as their own processes on free ports, every one with `env` (the stores the
 * scenario chose) and `perApp[app]` on top, the gateway pointed at the others, and waits until
 * each answers /readyz. `profileDir` adds a V8 CPU profile per app, written at its exit.
 */
export async function startMeldApps(
  root: string,
  apps: string[],
  env: NodeJS.ProcessEnv,
  o: { perApp?: Record<string, NodeJS.ProcessEnv>; profileDir?: string } = {},
): Promise<MeldApps> {
  const keys = generatePrincipalKeys(apps.filter((a) => a !== 'gateway'));
  const common = { ...env, LOG_LEVEL: env.LOG_LEVEL ?? 'warn', ...keys };
  const ports = Object.fromEntries(await Promise.all(apps.map(async (a) => [a, await freePort()] as const)));
  const urls = Object.fromEntries(apps.map((a) => [a, `http://127.0.0.1:${ports[a]}`]));
  // The gateway finds each app through MELD_<APP>_URL.
  const upstreams = Object.fromEntries(apps.filter((a) => a !== 'gateway').map((a) => [`MELD_${a.toUpperCase().replace(/-/g, '_')}_URL`, urls[a]]));
  const nodeArgs = o.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${o.profileDir}`] : [];
  const children: Record<string, ChildProcess> = {};
  const stop = async () => {
    await Promise.all(Object.values(children).map((c) => stopApp(c)));
  };
  try {
    for (const app of apps) {
      const port = app === 'gateway' ? { MELD_PORT: String(ports[app]), ...upstreams } : { PORT: String(ports[app]) };
      children[app] = startApp(root, app, { ...common, ...port, ...o.perApp?.[app] }, nodeArgs);
    }
    await Promise.all(apps.map((a) => waitReady(`${urls[a]}/readyz`)));
  } catch (err) {
    await stop();
    throw err;
  }
  return { urls, processes: Object.entries(children).map(([name, c]) => ({ name, pid: c.pid! })), stop };
}
