'use strict';
// `meld smsc`: the SMSC simulator in the foreground (the stack runs the same program detached).
const { spawnSync } = require('node:child_process');
const path = require('node:path');

function run(args) {
  const res = spawnSync(process.execPath, [path.join(__dirname, '../../smsc/server.js'), ...args], { stdio: 'inherit' });
  return res.status ?? 1;
}

module.exports = { run };
