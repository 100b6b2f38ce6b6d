'use strict';
// The local stack (no Docker): Postgres, Redis, ClickHouse, a Kafka dev broker and the SMSC
// simulator on loopback, data in .stack/. Plain Node builtins: it runs before `npm install`.
// A service whose MELD_* URL is set in the environment (and is not this stack's own) is used
// as is: never started here, only waited for.
const fs = require('node:fs');
const { ENV_FILE, LOGS, PIDS, pidFile, logFile, ensureDir, writeFileAtomic, readText, removeFile } = require('./paths');
const { livePid, stopPid, withLock } = require('./procs');
const { waitReady, tcp } = require('./probes');
const { brokerService } = require('./kafka');
const { redact } = require('./urls');

const SERVICES = {
  postgres: require('./postgres'),
  redis: require('./redis'),
  clickhouse: require('./clickhouse'),
  kafka: brokerService('kafka'),
  smsc: require('./smsc'),
};
const NAMES = Object.keys(SERVICES);
const DEFAULT_TIMEOUT_MS = Number(process.env.MELD_STACK_TIMEOUT_MS) || 90000;

const seconds = (ms) => `${(ms / 1000).toFixed(2)}s`;
const firstValue = (env) => Object.values(env)[0];
const defaultLog = (line) => console.log(line);

function pick(services) {
  const names = services && services.length ? services : NAMES;
  for (const n of names) if (!Object.hasOwn(SERVICES, n)) throw new Error(`unknown service "${n}" (known: ${NAMES.join(', ')})`);
  return names.map((n) => SERVICES[n]);
}

/** Start `svc` unless it runs (or is external), then wait until it answers. */
async function ensureService(svc, { log, timeoutMs }) {
  const external = svc.externalEnv(process.env);
  if (external) {
    const [key, url] = Object.entries(external.dev)[0];
    const what = `${svc.what} at ${redact(url)} (set in ${key}; unset it to use the local stack's own)`;
    await waitReady(svc.name, () => svc.probe(external.dev, false), { timeoutMs, what });
    return { how: `external ${redact(url)}`, pid: null };
  }
  return withLock(
    svc.name,
    async () => {
      let pid = livePid(svc.name, svc.matches, log);
      let how = 'already running';
      if (!pid) {
        if (svc.port && (await tcp('127.0.0.1', svc.port).catch(() => false))) {
          throw new Error(
            `${svc.name}: port ${svc.port} on 127.0.0.1 is in use by a process this stack did not start ` +
              `(no live pid in ${pidFile(svc.name)}); stop it, or export its URL (${Object.keys(svc.localEnv().dev).join(', ')}) to use it as an external service`,
          );
        }
        pid = await svc.start({ log });
        how = 'started';
      }
      await waitReady(svc.name, () => svc.probe(svc.localEnv()?.dev, true), { timeoutMs, pid, what: svc.what });
      if (svc.afterReady) await svc.afterReady({ log });
      return { how: `${how}, pid ${pid}`, pid };
    },
    { log },
  );
}

/** Dev URLs of every service (external ones as given), test URLs under `test`. */
function currentEnv() {
  const dev = {};
  const test = {};
  for (const svc of Object.values(SERVICES)) {
    const env = svc.externalEnv(process.env) || svc.localEnv();
    if (!env) continue; // e.g. kafka before its first start
    Object.assign(dev, env.dev);
    Object.assign(test, env.test);
  }
  return { ...dev, test };
}

async function up({ services, log = defaultLog, timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
  const list = pick(services);
  ensureDir(LOGS);
  ensureDir(PIDS);
  const t0 = Date.now();
  // In parallel: a slow ClickHouse start should not hold Redis back. One failure does not
  // stop the others; all failures are reported together at the end.
  const results = await Promise.allSettled(
    list.map(async (svc) => {
      const { how } = await ensureService(svc, { log, timeoutMs });
      log(`${svc.name.padEnd(11)} ready in ${seconds(Date.now() - t0)} (${how})`);
    }),
  );
  const env = currentEnv();
  const failures = results.filter((r) => r.status === 'rejected').map((r) => r.reason.message);
  if (failures.length) {
    const err = new Error(failures.join('\n'));
    err.env = env;
    throw err;
  }
  // Only a stack that answered gets recorded: env.json is what `meld test` and the apps trust.
  writeFileAtomic(ENV_FILE, `${JSON.stringify(env, null, 2)}\n`);
  return env;
}

async function stopService(svc, { log, timeoutMs = 20000 }) {
  await withLock(svc.name, async () => {
    const pid = livePid(svc.name, svc.matches, log);
    if (!pid) {
      if (svc.cleanup) svc.cleanup();
      log(`${svc.name.padEnd(11)} not running`);
      return;
    }
    const t0 = Date.now();
    const how = await stopPid(pid, { signal: svc.stopSignal, timeoutMs });
    removeFile(pidFile(svc.name));
    if (svc.cleanup) svc.cleanup();
    log(`${svc.name.padEnd(11)} ${how} (pid ${pid}) in ${seconds(Date.now() - t0)}`);
  });
}

/** Names of private brokers (startBroker) that have a pid file, e.g. left by a killed test run. */
function privateBrokers() {
  const files = fs.existsSync(PIDS) ? fs.readdirSync(PIDS) : [];
  const names = files.filter((f) => f.endsWith('.pid')).map((f) => f.slice(0, -'.pid'.length));
  return names.filter((n) => !Object.hasOwn(SERVICES, n) && BROKER_NAME.test(n));
}

/**
 * Stop the stack's own processes (never external services); data stays in .stack/.
 * Without a service list, private brokers are stopped too.
 */
async function down({ services, log = defaultLog, timeoutMs } = {}) {
  const list = pick(services);
  if (!services || !services.length) list.push(...privateBrokers().map((n) => brokerService(n)));
  const results = await Promise.allSettled(list.map((svc) => stopService(svc, { log, timeoutMs })));
  const failures = results.filter((r) => r.status === 'rejected').map((r) => r.reason.message);
  if (failures.length) throw new Error(failures.join('\n'));
}

/** [{ service, state: 'up' | 'down' | 'external', pid, url }] */
async function status() {
  return Promise.all(
    NAMES.map(async (name) => {
      const svc = SERVICES[name];
      const external = svc.externalEnv(process.env);
      if (external) return { service: name, state: 'external', pid: null, url: firstValue(external.dev) };
      const pid = livePid(name, svc.matches);
      const env = svc.localEnv();
      let state = 'down';
      if (pid) state = await svc.probe(env?.dev, true).then(() => 'up', () => 'down');
      return { service: name, state, pid, url: env ? firstValue(env.dev) : null };
    }),
  );
}

/** The MELD_* URLs written by the last `up` (test URLs under `test`). */
function readEnv() {
  const text = readText(ENV_FILE);
  if (text === null) throw new Error(`${ENV_FILE} does not exist: run \`meld stack up\` first`);
  return JSON.parse(text);
}

const BROKER_NAME = /^[a-z0-9][a-z0-9_.-]{0,63}$/i;

// A broker may not take another service's name: its pid file would be that service's.
function brokerName(name, fn) {
  if (!BROKER_NAME.test(name || '') || (Object.hasOwn(SERVICES, name) && name !== 'kafka')) throw new Error(`${fn}: bad broker name "${name}"`);
  return name;
}

/**
 * A private Kafka dev broker (for tests): `.stack/<name>.brokers`, its own pid and log, the
 * contract topics unless `topics` is given, Kafka's default `message.max.bytes` unless
 * `messageMaxBytes` is (ADR 0346). Idempotent: a running broker of that name is reused.
 */
async function startBroker({ name, partitions, topics, messageMaxBytes, log = () => {}, timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
  const svc = brokerService(brokerName(name, 'startBroker'), { partitions, topics, messageMaxBytes });
  ensureDir(LOGS);
  const { pid } = await ensureService(svc, { log, timeoutMs });
  return { name, brokers: svc.localEnv().dev.MELD_KAFKA_BROKERS, pid, brokersFile: svc.brokersFile, logFile: logFile(name) };
}

async function stopBroker(name, { log = () => {} } = {}) {
  await stopService(brokerService(brokerName(name, 'stopBroker')), { log });
}

function printTable(rows) {
  const cells = [['SERVICE', 'STATE', 'PID', 'URL'], ...rows.map((r) => [r.service, r.state, r.pid ? String(r.pid) : '-', r.url ? (r.state === 'external' ? redact(r.url) : r.url) : '-'])];
  const widths = cells[0].map((_, i) => Math.max(...cells.map((c) => c[i].length)));
  for (const c of cells) console.log(c.map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i]))).join('  '));
}

// Exit code of `status` when a service is down, so a script can tell (LSB's "not running");
// 1 stays a failure to read the status, 2 a usage error.
const STATUS_DOWN = 3;

const USAGE = `usage: meld stack up [service...] | down [service...] | status [--json]
services: ${NAMES.join(', ')}
status exits ${STATUS_DOWN} when a service is down (0: every one up or external)`;

/** CLI: `meld stack up|down|status`. Resolves to the exit code (also set on process.exitCode). */
async function runStackCommand(argv = []) {
  const args = argv[0] === 'stack' ? argv.slice(1) : [...argv];
  const [verb, ...rest] = args;
  const names = rest.filter((a) => !a.startsWith('-'));
  try {
    if (verb === 'up') {
      const t0 = Date.now();
      await up({ services: names });
      console.log(`stack up in ${seconds(Date.now() - t0)}; URLs in ${ENV_FILE}`);
    } else if (verb === 'down') {
      await down({ services: names });
    } else if (verb === 'status') {
      const rows = await status();
      if (rest.includes('--json')) console.log(JSON.stringify(rows, null, 2));
      else printTable(rows);
      if (rows.some((r) => r.state === 'down')) {
        process.exitCode = STATUS_DOWN;
        return STATUS_DOWN;
      }
    } else {
      console.error(USAGE);
      process.exitCode = 2;
      return 2;
    }
    return 0;
  } catch (err) {
    console.error(`meld stack ${verb} failed:\n${err.message}`);
    process.exitCode = 1;
    return 1;
  }
}

module.exports = { up, down, status, readEnv, startBroker, stopBroker, runStackCommand, SERVICES: NAMES };
