'use strict';
// Shared steps of the CLI: install, build, stack environment, child processes.
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '../..');
const stackDir = path.join(root, '.stack');

function step(title) {
  const started = Date.now();
  process.stdout.write(`▸ ${title}\n`);
  return (detail = '') => process.stdout.write(`  ✓ ${title} (${((Date.now() - started) / 1000).toFixed(1)} s)${detail ? ` ${detail}` : ''}\n`);
}

function run(cmd, args, options = {}) {
  const res = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...options });
  if (res.error) throw res.error;
  if (res.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${res.status}`);
}

/**
 * Installs dependencies only when node_modules is missing or older than the lock file.
 * `npm install`, not `npm ci`: the registry reachable here serves only the Linux builds of
 * platform packages (@swc/core-*, …), so the lock lists only those and npm 11's `ci`
 * refuses it as out of sync; `install` honours the lock and leaves it unchanged.
 */
function ensureInstalled() {
  const marker = path.join(root, 'node_modules', '.package-lock.json');
  const lock = path.join(root, 'package-lock.json');
  const fresh = fs.existsSync(marker) && fs.statSync(marker).mtimeMs >= fs.statSync(lock).mtimeMs;
  if (fresh) return;
  const done = step('installing dependencies (npm install from the lock file)');
  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error']);
  done();
}

function build() {
  const done = step('building apps and libs');
  run('node', ['tools/build.mjs'], { stdio: ['ignore', 'ignore', 'inherit'] });
  done();
}

async function stackUp(services) {
  const done = step('local stack');
  const env = await require('../stack').up({ services, log: (line) => process.stdout.write(`  ${line}\n`) });
  done();
  return env;
}

/** The MELD_* variables for dev or test, from the running stack, overridden by the caller's environment. */
function stackEnv(stack, profile) {
  const chosen = profile === 'test' ? { ...stack, ...(stack.test || {}) } : { ...stack };
  delete chosen.test;
  const env = {};
  for (const [k, v] of Object.entries(chosen)) if (k.startsWith('MELD_')) env[k] = String(v);
  // The local stack's switch: apps accept the public development admin token and principal
  // keys only with it (ADR 0101); nothing but this CLI and the test setup sets it.
  env.MELD_ALLOW_DEV_SECRETS = '1';
  // OAuth client metadata documents may live on this machine (ADR 0149); production leaves it off.
  if (env.MELD_OAUTH_ALLOW_PRIVATE_FETCH === undefined) env.MELD_OAUTH_ALLOW_PRIVATE_FETCH = '1';
  // Webhook receivers of a developer or a test run on this machine (ADR 0156).
  env.MELD_WEBHOOK_ALLOW_PRIVATE = process.env.MELD_WEBHOOK_ALLOW_PRIVATE ?? '1';
  return env;
}

/** The running stack's env.json, or {} when no local stack runs (URLs come from the environment then). */
function readStackEnv() {
  try {
    return require('../stack').readEnv();
  } catch {
    return {};
  }
}

/** Spawns a long-running child whose output lines are prefixed with its name. */
function spawnPrefixed(name, cmd, args, { env, logFile, onLine } = {}) {
  const child = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = logFile ? fs.createWriteStream(logFile, { flags: 'a' }) : null;
  for (const stream of [child.stdout, child.stderr]) {
    let buf = '';
    stream.on('data', (chunk) => {
      buf += chunk;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        log?.write(`${line}\n`);
        onLine?.(line);
      }
    });
  }
  child.on('exit', () => log?.end());
  return child;
}

module.exports = { root, stackDir, step, run, ensureInstalled, build, stackUp, stackEnv, readStackEnv, spawnPrefixed };
