'use strict';
// `meld bench <scenario>` / `npm run bench -- <scenario>`: TypeScript scenarios under bench/.
const { spawnSync } = require('node:child_process');
const { root, stackEnv } = require('../lib');
const { UsageError } = require('../args');

function help() {
  const scenarios = require('node:fs').readdirSync(require('node:path').join(root, 'bench/scenarios')).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3));
  return [`usage: meld bench <scenario> [--option value ...]`, '  runs a benchmark scenario against the local stack (each prints its options in its header comment)', `  scenarios: ${scenarios.join(', ')}`].join('\n');
}

function run(args) {
  if (!args[0] || args[0].startsWith('-')) throw new UsageError('meld bench: missing scenario');
  const stack = require('../lib').readStackEnv();
  const env = { ...process.env, ...stackEnv(stack, 'dev'), ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('MELD_'))) };
  const res = spawnSync(process.execPath, ['-r', '@swc-node/register', 'bench/run.ts', ...args], { cwd: root, stdio: 'inherit', env });
  return res.status ?? 1;
}

module.exports = { run, get help() {
  return help();
} };
