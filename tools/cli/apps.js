'use strict';
// Runs the eight apps as separate processes (as in production), prefixes their logs,
// restarts one that crashes, and records pids and ports in .stack/apps.json for the bench.
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { stackDir, spawnPrefixed } = require('./lib');

const APPS = require('../../libs/contracts/src/apps.json');
const COLORS = [36, 32, 33, 35, 34, 31, 96, 92];

function appUrlEnv(app) {
  return `MELD_${app.toUpperCase().replace(/-/g, '_')}_URL`;
}

/** Ports: the gateway on gatewayPort, the others on their table port shifted by the same offset. */
function planApps(gatewayPort) {
  const offset = gatewayPort - APPS.gateway.port;
  return Object.entries(APPS).map(([name, def]) => ({ name, port: def.port + offset }));
}

/** Resolves false when `port` on `host` cannot be listened on (another program holds it). */
function canListen(port, host) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * The planned ports (and the gateway's operations port unless 0) that another program holds, as
 * [{ name, port }]. Checked before anything starts: an app on a taken port only crash-loops, and a
 * Meld already running there answers the readiness wait's /healthz for the new one.
 */
async function portsInUse(plan, { host = '127.0.0.1', opsPort } = {}) {
  const wanted = opsPort ? [...plan, { name: 'gateway operations', port: opsPort }] : plan;
  const free = await Promise.all(wanted.map((a) => canListen(a.port, host)));
  return wanted.filter((_, i) => !free[i]).map(({ name, port }) => ({ name, port }));
}

// Nest's boot chatter (one line per module and route) stays in the log files, not the console.
const QUIET_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

function formatLine(name, color, line) {
  let text = line;
  try {
    const rec = JSON.parse(line);
    if (QUIET_CONTEXTS.has(rec.context)) return null;
    const level = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' }[rec.level] || rec.level;
    const extra = rec.requestId ? ` req=${rec.requestId}` : '';
    text = `${level} ${rec.context ? `[${rec.context}] ` : ''}${rec.msg}${extra}${rec.err ? ` ${rec.err.message}` : ''}`;
  } catch {
    /* not JSON: print as is */
  }
  return `\x1b[${color}m${name.padEnd(14)}\x1b[0m ${text}`;
}

/**
 * The public /healthz is bare by design (ADR 0105); the gateway's operations port names the apps
 * and stores that are down. `fallback` when that port does not answer either.
 */
async function whatIsDown(opsPort, fallback) {
  try {
    const res = await fetch(`http://127.0.0.1:${opsPort}/healthz`, { signal: AbortSignal.timeout(5000) });
    return await res.text();
  } catch {
    return fallback;
  }
}

function startApps({ env, gatewayPort = 8080, logDir, echo = false, appsFile = path.join(stackDir, 'apps.json') }) {
  fs.mkdirSync(logDir, { recursive: true });
  const plan = planApps(gatewayPort);
  const urls = Object.fromEntries(plan.map((a) => [appUrlEnv(a.name), `http://127.0.0.1:${a.port}`]));
  const children = new Map();
  let stopping = false;

  const launch = (app, index, attempt = 0) => {
    // The OAuth issuer and the 401's resource_metadata name the gateway these apps sit behind (ADR 0145).
    const appEnv = { MELD_PUBLIC_URL: `http://127.0.0.1:${gatewayPort}`, ...env, ...urls, PORT: String(app.port), ...(app.name === 'gateway' ? { MELD_PORT: String(app.port) } : {}) };
    const child = spawnPrefixed(app.name, process.execPath, [path.join('apps', app.name, 'dist', 'main.js')], {
      env: appEnv,
      logFile: path.join(logDir, `${app.name}.log`),
      onLine: echo
        ? (line) => {
            const text = formatLine(app.name, COLORS[index % COLORS.length], line);
            if (text !== null) console.log(text);
          }
        : undefined,
    });
    children.set(app.name, child);
    writeAppsFile();
    child.on('exit', (code, signal) => {
      if (stopping) return;
      const delay = Math.min(1000 * 2 ** attempt, 30000);
      console.error(`${app.name} exited (${signal || code}); restarting in ${delay / 1000} s`);
      setTimeout(() => !stopping && launch(app, index, attempt + 1), delay);
    });
  };

  const writeAppsFile = () => {
    const rows = plan.map((a) => ({ name: a.name, port: a.port, pid: children.get(a.name)?.pid ?? null }));
    fs.mkdirSync(path.dirname(appsFile), { recursive: true });
    fs.writeFileSync(appsFile, JSON.stringify(rows, null, 2));
  };

  plan.forEach((app, i) => launch(app, i));

  const supervisor = {
    plan,
    gatewayUrl: `http://127.0.0.1:${gatewayPort}`,
    /**
     * Resolves when the gateway's system check answers 200. After the timeout it stops the apps
     * (their restarts and output pipes would keep `meld start` running) and rejects with what is down.
     */
    async ready(timeoutMs = 180000) {
      const deadline = Date.now() + timeoutMs;
      let last = '';
      while (Date.now() < deadline) {
        try {
          const res = await fetch(`http://127.0.0.1:${gatewayPort}/healthz`, { signal: AbortSignal.timeout(5000) });
          if (res.status === 200) return;
          last = await res.text();
        } catch (err) {
          last = err.message;
        }
        await new Promise((r) => setTimeout(r, 500));
      }
      const down = await whatIsDown(Number(env.MELD_OPS_PORT) || gatewayPort + 100, last);
      await supervisor.stop();
      throw new Error(`apps not ready after ${timeoutMs / 1000} s (stopped): ${down}`);
    },
    async stop(timeoutMs = 15000) {
      stopping = true;
      const exits = [...children.values()].map(
        (c) =>
          new Promise((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            const kill = setTimeout(() => c.kill('SIGKILL'), timeoutMs);
            c.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            c.kill('SIGTERM');
          }),
      );
      await Promise.all(exits);
      fs.rmSync(appsFile, { force: true });
    },
  };
  return supervisor;
}

module.exports = { startApps, planApps, portsInUse, whatIsDown };
