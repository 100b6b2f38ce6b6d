'use strict';
// SMSC simulator (SMPP 3.4) on 127.0.0.1:52775: tools/smsc/server.js, run with this Node.
// MELD_SMSC_SIMULATOR may name another script with the same CLI (--port, --host).
const fs = require('node:fs');
const path = require('node:path');
const { ROOT } = require('./paths');
const { spawnDetached } = require('./procs');
const { tcp } = require('./probes');
const { isLocal } = require('./urls');

const PORT = 52775;
/** HTTP control of the bundled simulator (mobile-originated messages: `meld smsc send`). */
const CONTROL_PORT = PORT + 1;
const URL_LOCAL = `smpp://127.0.0.1:${PORT}`;
const script = () => process.env.MELD_SMSC_SIMULATOR || path.join(ROOT, 'tools', 'smsc', 'server.js');

async function start() {
  const file = script();
  if (!fs.existsSync(file)) throw new Error(`smsc: the SMSC simulator ${file} does not exist`);
  // Another simulator (MELD_SMSC_SIMULATOR) promises only --port and --host.
  const control = process.env.MELD_SMSC_SIMULATOR ? [] : ['--control-port', String(CONTROL_PORT)];
  return spawnDetached('smsc', process.execPath, [file, '--port', String(PORT), '--host', '127.0.0.1', ...control], { cwd: ROOT });
}

module.exports = {
  name: 'smsc',
  port: PORT,
  controlPort: CONTROL_PORT,
  what: 'TCP connect',
  stopSignal: 'SIGTERM',
  matches: (cmd) => cmd.includes('--port') && cmd.includes(String(PORT)),
  localEnv: () => ({ dev: { MELD_SMSC_URL: URL_LOCAL }, test: { MELD_SMSC_URL: URL_LOCAL } }),
  externalEnv(env) {
    const url = env.MELD_SMSC_URL;
    if (!url || isLocal(url, PORT)) return null;
    return { dev: { MELD_SMSC_URL: url }, test: { MELD_SMSC_URL: url } };
  },
  probe(env) {
    const u = new URL(env.MELD_SMSC_URL);
    return tcp(u.hostname, Number(u.port || 2775));
  },
  start,
};
