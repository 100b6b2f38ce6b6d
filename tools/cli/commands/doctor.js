'use strict';
// `meld doctor`: checks what `npm start` / `npm test` need (Node, packages, stores and their
// versions, ports, disk, the Kafka dev broker, the running gateway) and says, for each
// failure, what to do. Read-only: it installs, starts and stops nothing.
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { parseVerbArgs } = require('../args');
const { root, stackDir } = require('../lib');

const HELP = [
  'usage: meld doctor [--json]',
  '  checks Node, the Debian packages, the local stack (running, versions), ports, disk, the Kafka',
  '  dev broker and the gateway; prints what to do for each problem; exits 1 when one fails',
].join('\n');

const APPS = require(path.join(root, 'libs/contracts/src/apps.json'));
const MOCK_HEADER = '/usr/include/librdkafka/rdkafka_mock.h';

/** Resolves true when something accepts connections on 127.0.0.1:port. */
function listening(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.setTimeout(1000);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
}

const ok = (name, detail) => ({ name, level: 'ok', detail });
const warn = (name, detail, fix) => ({ name, level: 'warn', detail, fix });
const fail = (name, detail, fix) => ({ name, level: 'fail', detail, fix });

function nodeCheck() {
  const major = Number(process.versions.node.split('.')[0]);
  return major >= 20 ? ok('node', `v${process.versions.node}`) : fail('node', `v${process.versions.node}`, 'install Node.js 20 or later');
}

function platformCheck() {
  const debian = fs.existsSync('/etc/debian_version');
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!debian) return warn('platform', `${process.platform}, not Debian-family`, 'the stack installs its stores with apt-get: install PostgreSQL, Redis, ClickHouse and librdkafka-dev yourself, or export MELD_POSTGRES_URL, MELD_REDIS_URL, MELD_CLICKHOUSE_URL, MELD_KAFKA_BROKERS to use existing services');
  return ok('platform', `Debian ${fs.readFileSync('/etc/debian_version', 'utf8').trim()}${root ? ', root (missing packages are installed on start)' : ''}`);
}

function packageChecks() {
  const { which } = require('../../stack/packages');
  const { binDir } = require('../../stack/postgres');
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const wanted = [
    ['postgresql', 'the PostgreSQL server', () => binDir() !== null, 'MELD_POSTGRES_URL'],
    ['redis-server', 'redis-server', () => which('redis-server') !== null, 'MELD_REDIS_URL'],
    ['clickhouse-server', 'clickhouse-server', () => which('clickhouse-server') !== null, 'MELD_CLICKHOUSE_URL'],
    ['librdkafka-dev', `the librdkafka mock header (${MOCK_HEADER})`, () => fs.existsSync(MOCK_HEADER), 'MELD_KAFKA_BROKERS'],
    ['build-essential', 'a C compiler (cc) for the Kafka dev broker', () => which('cc') !== null, 'MELD_KAFKA_BROKERS'],
  ];
  return wanted.map(([pkg, what, present, envVar]) => {
    if (present()) return ok(`package ${pkg}`, 'installed');
    if (process.env[envVar]) return ok(`package ${pkg}`, `not installed; ${envVar} points at an existing service`);
    return root ? warn(`package ${pkg}`, `${what} is missing`, '`npm start` installs it (apt-get): nothing to do, but the first start takes longer') : fail(`package ${pkg}`, `${what} is missing`, `sudo apt-get install -y ${pkg} (or run npm start as root, or set ${envVar})`);
  });
}

async function storeChecks() {
  const stack = require('../../stack');
  const { httpRequest, run } = require('../../stack/probes');
  const rows = await stack.status();
  const out = [];
  for (const r of rows) {
    if (r.state === 'down') {
      out.push(fail(`store ${r.service}`, 'not running', '`npx meld stack up` starts it (`npm start` and `npm test` do too); its log is .stack/logs/' + r.service + '.log'));
      continue;
    }
    let version = '';
    try {
      if (r.service === 'postgres') {
        const { binDir } = require('../../stack/postgres');
        const psql = binDir() ? path.join(binDir(), 'psql') : 'psql';
        version = `PostgreSQL ${(await run(psql, [r.state === 'external' ? r.url : 'postgres://postgres@127.0.0.1:55432/postgres', '-XtAc', 'SHOW server_version'])).trim()}`;
      } else if (r.service === 'clickhouse') {
        version = `ClickHouse ${(await httpRequest(`${r.url.replace(/\/+$/, '')}/?query=SELECT%20version()`)).trim()}`;
      } else if (r.service === 'redis') {
        version = (await run('redis-server', ['--version'])).trim().split(' ').slice(0, 3).join(' ');
      } else if (r.service === 'kafka') {
        version = `dev broker ${r.url}`;
      } else version = r.url ?? '';
    } catch (err) {
      out.push(warn(`store ${r.service}`, `${r.state}, but its version could not be read: ${err.message.split('\n')[0]}`, 'see .stack/logs/' + r.service + '.log'));
      continue;
    }
    const old = r.service === 'postgres' && Number(version.match(/PostgreSQL (\d+)/)?.[1]) < 13;
    out.push(old ? fail(`store ${r.service}`, version, 'PostgreSQL 13 or later is needed (gen_random_uuid, DROP DATABASE … WITH (FORCE))') : ok(`store ${r.service}`, `${r.state}${version ? `, ${version}` : ''}`));
  }
  return out;
}

async function portChecks() {
  const gatewayPort = Number(process.env.MELD_PORT || APPS.gateway.port);
  const offset = gatewayPort - APPS.gateway.port;
  let ours = new Set();
  try {
    const alive = (pid) => {
      try {
        return pid && process.kill(pid, 0);
      } catch {
        return false;
      }
    };
    ours = new Set(JSON.parse(fs.readFileSync(path.join(stackDir, 'apps.json'), 'utf8')).filter((a) => alive(a.pid)).map((a) => a.port));
  } catch {
    /* no apps started by `meld start` */
  }
  const out = [];
  for (const [name, def] of Object.entries(APPS)) {
    const port = def.port + offset;
    if (!(await listening(port))) out.push(ok(`port ${port}`, `free (${name})`));
    else if (ours.has(port)) out.push(ok(`port ${port}`, `${name} of a running \`npm start\``));
    else out.push(warn(`port ${port}`, `in use (${name} needs it)`, `if it is not a running Meld, stop that program (\`ss -ltnp 'sport = :${port}'\` names it) or start with MELD_PORT=<another> (the apps follow at the same offset)`));
  }
  return out;
}

function diskCheck() {
  const dir = fs.existsSync(stackDir) ? stackDir : root;
  const s = fs.statfsSync(dir);
  const freeGb = (s.bavail * s.bsize) / 1024 ** 3;
  const detail = `${freeGb.toFixed(1)} GB free under ${dir}`;
  if (freeGb < 0.5) return fail('disk', detail, 'free some space: the stores write under .stack/ (`npx meld stack down`, then delete .stack/ to reset all local data)');
  if (freeGb < 2) return warn('disk', detail, 'the benches and a large `meld seed` need several GB');
  return ok('disk', detail);
}

async function gatewayCheck() {
  const base = process.env.MELD_GATEWAY_URL || `http://127.0.0.1:${process.env.MELD_PORT || APPS.gateway.port}`;
  try {
    const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(3000) });
    return res.status === 200 ? ok('gateway', `${base}/healthz 200`) : warn('gateway', `${base}/healthz ${res.status}`, 'an app or a store is not ready: read the output of `npm start` or .stack/logs/apps/');
  } catch {
    return ok('gateway', `not running at ${base} (\`npm start\` starts it)`);
  }
}

async function run(args) {
  const { values } = parseVerbArgs('doctor', args, { options: { json: { type: 'boolean', default: false } } });
  const checks = [nodeCheck(), platformCheck(), ...packageChecks(), ...(await storeChecks()), ...(await portChecks()), diskCheck(), await gatewayCheck()];
  if (values.json) console.log(JSON.stringify(checks, null, 2));
  else {
    const mark = { ok: '✓', warn: '!', fail: '✗' };
    for (const c of checks) {
      console.log(`${mark[c.level]} ${c.name.padEnd(26)} ${c.detail}`);
      if (c.fix) console.log(`  → ${c.fix}`);
    }
    const failed = checks.filter((c) => c.level === 'fail').length;
    console.log(failed ? `\n${failed} problem(s) to fix before \`npm start\`` : '\nready for `npm start` and `npm test`');
  }
  return checks.some((c) => c.level === 'fail') ? 1 : 0;
}

module.exports = { run, help: HELP };
