'use strict';
// `meld smsc`: the SMSC simulator in the foreground (the stack runs the same program detached).
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const help = [
  'usage: meld smsc [--port 52775] [--host 127.0.0.1] [--receipt-delay-ms 100]',
  '  the SMPP 3.4 simulator in the foreground: destination ending 13 → UNDELIV, 14 → EXPIRED, 99 → submit error, else DELIVRD',
].join('\n');

function run(args) {
  const res = spawnSync(process.execPath, [path.join(__dirname, '../../smsc/server.js'), ...args], { stdio: 'inherit' });
  return res.status ?? 1;
}

module.exports = { run, help };
