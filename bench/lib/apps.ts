import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

/** A free loopback port for an app a scenario starts itself. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Starts a built app (`apps/<app>/dist/main.js`) as its own process, as production runs it.
 * Retention pruning is off unless the scenario sets it (ADR 0168): a prune a minute into a run
 * would delete a scenario's deliberately old events mid-measurement.
 */
export function startApp(root: string, app: string, env: NodeJS.ProcessEnv, nodeArgs: string[] = []): ChildProcess {
  const main = join(root, 'apps', app, 'dist', 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` first`);
  const child = spawn(process.execPath, [...nodeArgs, main], { cwd: root, env: { MELD_PROBES_RETENTION_EVERY_MS: '0', ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  child.on('exit', (code, signal) => {
    if (code !== null && code !== 0) process.stderr.write(`[bench] ${app} exited with ${code ?? signal}\n`);
  });
  return child;
}

/**
 * Starts one of the bench's own TypeScript processes (`bench/lib/*.ts`: floors, stubs) through
 * swc's register hook, in `root`, with `env` as its whole environment.
 */
export function startScript(root: string, file: string, env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ['-r', '@swc-node/register', join(root, file)], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** Resolves once `url` answers 200 (typically an app's /readyz). */
export async function waitReady(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(2000) })).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} not ready after ${timeoutMs / 1000} s`);
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
export async function stopApp(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
