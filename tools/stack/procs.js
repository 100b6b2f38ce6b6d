'use strict';
// Detached service processes tracked by pid files, plus a cross-process lock so two
// `meld stack up` runs (or parallel Jest workers) never start the same service twice.
const fs = require('node:fs');
const { spawn } = require('node:child_process');
const { PIDS, pidFile, logFile, ensureDir, writeFileAtomic, readText, removeFile } = require('./paths');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// kill(pid, 0) also succeeds for zombies, so look at /proc to tell a dead child apart.
function isAlive(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if (err.code !== 'EPERM') return false;
  }
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === null) return process.platform !== 'linux';
  const state = stat.charAt(stat.lastIndexOf(')') + 2); // comm may itself contain ')'
  return state !== 'Z' && state !== 'X';
}

function cmdline(pid) {
  const raw = readText(`/proc/${pid}/cmdline`);
  return raw === null ? '' : raw.split('\0').join(' ');
}

/**
 * Pid from `.stack/pids/<name>.pid` if that process is alive and its command line still
 * matches (pids get reused after a reboot); otherwise the stale file is removed.
 */
function livePid(name, matches, log) {
  const text = readText(pidFile(name));
  if (text === null) return null;
  const pid = Number(text.trim());
  if (isAlive(pid) && matches(cmdline(pid))) return pid;
  removeFile(pidFile(name));
  if (log) log(`${name.padEnd(11)} removed stale pid file (pid ${text.trim() || '?'} is gone)`);
  return null;
}

/** Start `cmd` in its own session with output appended to its log, so it outlives the CLI. */
function spawnDetached(name, cmd, args, { cwd, env, uid, gid, nice = 0 } = {}) {
  ensureDir(PIDS);
  const out = fs.openSync(logFile(name), 'a');
  try {
    fs.writeSync(out, `\n--- ${new Date().toISOString()} starting: ${cmd} ${args.join(' ')}${nice > 0 ? ` (nice ${nice})` : ''}\n`);
    // `nice` execs the server, so every thread it starts inherits the priority and the pid is the server's.
    const [file, argv] = nice > 0 ? ['nice', ['-n', String(nice), cmd, ...args]] : [cmd, args];
    const child = spawn(file, argv, { cwd, env: env || process.env, uid, gid, detached: true, stdio: ['ignore', out, out] });
    // A missing binary is reported through 'error', never as an exception.
    child.on('error', () => {});
    if (!child.pid) throw new Error(`${name}: could not start ${cmd}`);
    child.unref();
    if (nice > 0) lowerAutogroup(child.pid, nice);
    writeFileAtomic(pidFile(name), `${child.pid}\n`);
    return child.pid;
  } finally {
    fs.closeSync(out);
  }
}

/**
 * A detached server leads its own session, and with the kernel's autogroup scheduling
 * (sched_autogroup_enabled, on by default) a session competes as one unit: its threads' nice
 * only ranks them among themselves. The group's own nice is what yields to the other sessions.
 */
function lowerAutogroup(pid, nice) {
  try {
    fs.writeFileSync(`/proc/${pid}/autogroup`, String(nice));
  } catch {
    // No autogroup (kernel without it, or not Linux): the threads' nice applies as is.
  }
}

/** Signal, wait, then SIGKILL after `timeoutMs`. Resolves to how it ended. */
async function stopPid(pid, { signal = 'SIGTERM', timeoutMs = 20000 } = {}) {
  if (!isAlive(pid)) return 'not running';
  try {
    process.kill(pid, signal);
  } catch (err) {
    if (err.code === 'ESRCH') return 'stopped';
    throw err;
  }
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return 'stopped';
    await sleep(100);
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return 'stopped';
  }
  for (let i = 0; i < 50 && isAlive(pid); i++) await sleep(100);
  return 'killed';
}

function tailLog(name, lines = 20) {
  const text = readText(logFile(name));
  if (!text) return '';
  return text.trimEnd().split('\n').slice(-lines).map((l) => `    ${l}`).join('\n');
}

/** Exclusive lock file `.stack/pids/<name>.lock` holding the owner's pid; a dead owner's lock is taken over. */
async function withLock(name, fn, { timeoutMs = 10 * 60 * 1000, log } = {}) {
  ensureDir(PIDS);
  const file = `${PIDS}/${name}.lock`;
  const deadline = Date.now() + timeoutMs;
  let told = false;
  for (;;) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    const owner = Number((readText(file) || '').trim());
    // An empty file may be a lock being written right now: only a dead owner makes it stale.
    const fresh = !owner && Date.now() - (fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0) < 5000;
    if (!fresh && !isAlive(owner)) {
      removeFile(file);
      continue;
    }
    if (Date.now() > deadline) throw new Error(`${name}: timed out waiting for lock ${file} (held by pid ${owner})`);
    if (!told && log && owner !== process.pid) log(`${name.padEnd(11)} waiting for pid ${owner}, which is starting it`);
    told = true;
    await sleep(150);
  }
  try {
    return await fn();
  } finally {
    removeFile(file);
  }
}

module.exports = { sleep, isAlive, cmdline, livePid, spawnDetached, stopPid, tailLog, withLock };
