'use strict';
// `meld start` / `npm start`: install, build, stack up, migrate, then supervise every app.
const path = require('node:path');
const { root, stackDir, step, ensureInstalled, build, stackUp, stackEnv } = require('../lib');
const { migrate } = require('./migrate');
const { parseVerbArgs } = require('../args');

const help = 'usage: meld start\n  installs dependencies, builds, brings the local stack up, migrates and runs every app (Ctrl-C stops the apps)';
const { startApps, planApps, portsInUse } = require('../apps');

/** MELD_PORT, checked: the other apps take the 7 ports above it and the operations port is 100 above. */
function gatewayPort(value = '8080') {
  const port = /^\d{1,5}$/.test(value) ? Number(value) : NaN;
  if (!(port >= 1 && port <= 65435)) {
    throw new Error(`MELD_PORT must be a whole number from 1 to 65435 (the apps take the 7 ports above it, the operations port the one 100 above); got "${value}"`);
  }
  return port;
}

async function run(args = []) {
  parseVerbArgs('start', args);
  const started = Date.now();
  const port = gatewayPort(process.env.MELD_PORT || undefined);
  // Before the minutes of install, build and stack: a taken port would only show as a crash loop.
  const opsPort = process.env.MELD_OPS_PORT === undefined ? port + 100 : Number(process.env.MELD_OPS_PORT);
  const busy = await portsInUse(planApps(port), { host: process.env.MELD_HOST || '127.0.0.1', opsPort });
  if (busy.length) {
    throw new Error(
      `${busy.map((a) => `port ${a.port} (${a.name})`).join(', ')} already in use: stop what holds it ` +
        `(\`ss -ltnp 'sport = :${busy[0].port}'\` names it; a running \`npm start\`?) or start with MELD_PORT=<another> (the apps follow at the same offset)`,
    );
  }
  ensureInstalled();
  build();
  const stack = await stackUp();
  const env = stackEnv(stack, 'dev');
  env.MELD_ADMIN_TOKEN = process.env.MELD_ADMIN_TOKEN || 'meld-dev-admin';
  await migrate(env);
  const supervisor = startApps({ env: { ...process.env, ...env }, gatewayPort: port, logDir: path.join(stackDir, 'logs', 'apps'), echo: true });
  const done = step('waiting for every app to be ready');
  await supervisor.ready();
  done();
  const url = `http://127.0.0.1:${port}`;
  console.log(
    [
      '',
      `Meld is up in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      `  gateway      ${url}   (system health: ${url}/healthz)`,
      `  admin token  ${env.MELD_ADMIN_TOKEN}`,
      `  admin API    ${url}/admin/v1`,
      `  logs         ${path.relative(root, path.join(stackDir, 'logs'))}/`,
      '  Ctrl-C stops the apps (the stack keeps running: `meld stack down` stops it).',
      '',
    ].join('\n'),
  );
  return new Promise((resolve) => {
    let stopping = false;
    const stop = async () => {
      if (stopping) return;
      stopping = true;
      console.log('\nstopping apps…');
      await supervisor.stop();
      resolve(0);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

module.exports = { run, help };
