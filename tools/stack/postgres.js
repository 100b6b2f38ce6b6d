'use strict';
// PostgreSQL on 127.0.0.1:55432, data in .stack/postgres. Postgres refuses to run as root,
// so as root the cluster belongs to (and runs as) the `postgres` OS user.
const fs = require('node:fs');
const path = require('node:path');
const { STACK, dataDir, ensureDir, readText } = require('./paths');
const { ensurePackage, ensureCommand, isRoot } = require('./packages');
const { spawnDetached, isAlive } = require('./procs');
const { run } = require('./probes');
const { isLocal, withPath } = require('./urls');

const PORT = 55432;
const DEV_URL = `postgres://meld:meld@127.0.0.1:${PORT}/meld`;
const TEST_URL = `postgres://meld:meld@127.0.0.1:${PORT}/meld_test`;
const DATA = dataDir('postgres');
const PG_LIB = '/usr/lib/postgresql';

/** Newest /usr/lib/postgresql/<version>/bin that has a server. */
function binDir() {
  let versions = [];
  try {
    versions = fs.readdirSync(PG_LIB).filter((v) => fs.existsSync(path.join(PG_LIB, v, 'bin', 'postgres')));
  } catch {
    return null;
  }
  versions.sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(PG_LIB, versions[0], 'bin') : null;
}

/** uid/gid to run the server as: `postgres` when we are root, else ourselves. */
function runAs() {
  if (!isRoot()) return {};
  const line = fs.readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('postgres: the OS user "postgres" does not exist (it comes with the Debian package postgresql)');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

// The server user must be able to walk down to .stack/postgres: add search (x) permission,
// never read permission, to any directory on the way that lacks it.
function makeTraversable(dir, log) {
  for (let d = path.dirname(dir); ; d = path.dirname(d)) {
    const st = fs.statSync(d);
    if (!(st.mode & 0o001)) {
      fs.chmodSync(d, st.mode | 0o001);
      log(`postgres    made ${d} traversable (o+x) for the postgres user`);
    }
    if (d === path.dirname(d)) break;
  }
}

async function initdb(bin, user, log) {
  const tmp = `${DATA}.init`;
  fs.rmSync(tmp, { recursive: true, force: true });
  ensureDir(tmp, 0o700);
  if (user.uid !== undefined) fs.chownSync(tmp, user.uid, user.gid);
  log(`postgres    initdb ${DATA}`);
  await run(path.join(bin, 'initdb'), ['-D', tmp, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-locale'], {
    ...user,
    cwd: STACK,
    env: { PATH: process.env.PATH, LC_ALL: 'C' },
    timeoutMs: 120000,
  });
  fs.renameSync(tmp, DATA); // a crash mid-initdb leaves only .init behind, never a broken DATA
}

/** Live processes whose working directory is `dir` (every Postgres backend chdirs to its data dir). */
function processesIn(dir) {
  return fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n) && isAlive(Number(n)) && cwdOf(n) === dir);
}

function cwdOf(pid) {
  try {
    return fs.readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return null;
  }
}

// After a kill -9 the dead postmaster can linger as a zombie until init reaps it, and Postgres
// then refuses to start ("lock file postmaster.pid already exists"). The lock is stale when its
// pid is dead and no live process still works in the data dir (no orphaned backend).
function clearStaleLock(log) {
  const lock = path.join(DATA, 'postmaster.pid');
  const pid = Number((readText(lock) || '').split('\n')[0]);
  if (!pid || isAlive(pid) || processesIn(DATA).length > 0) return;
  fs.rmSync(lock, { force: true });
  log(`postgres    removed stale postmaster.pid (pid ${pid} is gone)`);
}

async function start({ log }) {
  await ensurePackage({ pkg: 'postgresql', what: 'the PostgreSQL server', present: () => binDir() !== null }, log);
  const bin = binDir();
  const user = runAs();
  ensureDir(STACK);
  if (user.uid !== undefined) makeTraversable(DATA, log);
  if (!fs.existsSync(path.join(DATA, 'PG_VERSION'))) {
    if (fs.existsSync(DATA) && fs.readdirSync(DATA).length > 0) {
      throw new Error(`postgres: ${DATA} exists but is not a Postgres data directory; move it away and run again`);
    }
    fs.rmSync(DATA, { recursive: true, force: true });
    await initdb(bin, user, log);
  }
  clearStaleLock(log);
  // Rewritten on every start so the access rule is always this one: trust, 127.0.0.1 only.
  const hba = path.join(DATA, 'pg_hba.conf');
  fs.writeFileSync(hba, '# written by tools/stack/postgres.js\nhost all all 127.0.0.1/32 trust\n', { mode: 0o600 });
  if (user.uid !== undefined) fs.chownSync(hba, user.uid, user.gid);
  const settings = {
    listen_addresses: '127.0.0.1',
    port: PORT,
    unix_socket_directories: '', // TCP only: no clash with a system cluster's socket dir
    max_connections: 200,
    // Tuned for the write-heavy local workload (event ids, outboxes: a million rows a minute in
    // the benches) instead of initdb's minimal defaults: with 128MB of buffers and 1GB of WAL
    // between checkpoints, backends wrote their own dirty pages and a checkpoint ran every few
    // minutes, each one stalling commits for 100-200 ms (ADR 0077).
    shared_buffers: '512MB',
    max_wal_size: '4GB',
    checkpoint_timeout: '15min',
    checkpoint_completion_target: '0.9',
    logging_collector: 'off', // stderr goes to .stack/logs/postgres.log
  };
  // Opt-in statement statistics for profiling a bench (which statement costs what per message);
  // off by default so that bench figures carry no sampling cost.
  if (process.env.MELD_STACK_PG_STAT_STATEMENTS === '1') {
    Object.assign(settings, { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track_planning': 'on' });
  }
  const args = ['-D', DATA, ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
  return spawnDetached('postgres', path.join(bin, 'postgres'), args, { ...user, cwd: DATA, env: { PATH: process.env.PATH, LC_ALL: 'C' } });
}

async function psql(url, args, input) {
  const cmd = binDir() ? path.join(binDir(), 'psql') : await ensureCommand('psql', 'postgresql-client');
  const env = { ...process.env, PGCONNECT_TIMEOUT: '3' };
  return run(cmd, [url, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-tA', ...args], { input, env });
}

const SUPERUSER_URL = `postgres://postgres@127.0.0.1:${PORT}/postgres`;

// Locally as the superuser: the role meld does not exist before the first bootstrap.
async function probe(env, local) {
  const out = await psql(local ? SUPERUSER_URL : env.MELD_POSTGRES_URL, ['-c', 'SELECT 1']);
  if (out.trim() !== '1') throw new Error(`SELECT 1 returned ${JSON.stringify(out)}`);
}

// Idempotent: role meld (superuser is fine locally) and the databases meld and meld_test.
const BOOTSTRAP_SQL = `
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'meld') THEN
    CREATE ROLE meld LOGIN SUPERUSER PASSWORD 'meld';
  END IF;
END $$;
SELECT 'CREATE DATABASE meld OWNER meld' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'meld')\\gexec
SELECT 'CREATE DATABASE meld_test OWNER meld' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'meld_test')\\gexec
`;

async function afterReady() {
  await psql(SUPERUSER_URL, ['-f', '-'], BOOTSTRAP_SQL);
}

module.exports = {
  binDir,
  name: 'postgres',
  port: PORT,
  what: 'SELECT 1',
  stopSignal: 'SIGINT', // "fast" shutdown; SIGTERM ("smart") would wait for every app to disconnect
  matches: (cmd) => cmd.includes('postgres') && cmd.includes(DATA),
  localEnv: () => ({ dev: { MELD_POSTGRES_URL: DEV_URL }, test: { MELD_POSTGRES_URL: TEST_URL } }),
  externalEnv(env) {
    const url = env.MELD_POSTGRES_URL;
    if (!url || isLocal(url, PORT)) return null;
    const db = new URL(url).pathname.slice(1);
    return { dev: { MELD_POSTGRES_URL: url }, test: { MELD_POSTGRES_URL: /test/i.test(db) ? url : withPath(url, '/meld_test') } };
  },
  probe,
  start,
  afterReady,
};
