'use strict';
// `meld bench <scenario>` / `npm run bench -- <scenario>`: TypeScript scenarios under bench/.
const { spawnSync } = require('node:child_process');
const { root, stackEnv } = require('../lib');

function run(args) {
  const stack = require('../lib').readStackEnv();
  const env = { ...process.env, ...stackEnv(stack, 'dev'), ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('MELD_'))) };
  const res = spawnSync(process.execPath, ['-r', '@swc-node/register', 'bench/run.ts', ...args], { cwd: root, stdio: 'inherit', env });
  return res.status ?? 1;
}

module.exports = { run };
