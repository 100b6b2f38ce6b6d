#!/usr/bin/env node
'use strict';
// The `meld` CLI. Plain CommonJS with no dependencies at load time: `npm start` and
// `npm test` call it on a fresh clone before node_modules exists.
const { UsageError, wantsHelp } = require('./args');

const commands = {
  start: () => require('./commands/start'),
  test: () => require('./commands/test'),
  stack: () => require('./commands/stack'),
  migrate: () => require('./commands/migrate'),
  topics: () => require('./commands/topics'),
  smsc: () => require('./commands/smsc'),
  bench: () => require('./commands/bench'),
  admin: () => require('./commands/admin'),
  bootstrap: () => require('./commands/bootstrap'),
  seed: () => require('./commands/seed'),
  doctor: () => require('./commands/doctor'),
  keys: () => require('./commands/keys'),
  dlq: () => require('./commands/dlq'),
};

function usage() {
  return [
    'usage: meld <command> [args]',
    '  start                 install, build, bring the local stack up, migrate, run every app',
    '  test                  the same set-up, then lint, type check and every test',
    '  stack up|down|status  the local stack (PostgreSQL, Redis, ClickHouse, Kafka dev broker, SMSC)',
    '  migrate               apply Postgres and ClickHouse migrations',
    '  topics                create missing Kafka topics (real Kafka; the dev broker has them)',
    '  smsc [--port N]       run the SMSC simulator in the foreground',
    '  bench <scenario>      run a benchmark scenario against the running system',
    '  admin <verb> <path>   call the admin API of the running gateway (--data JSON); prints the JSON',
    '  bootstrap [--json]    create an organization, project, API data source and all-scope product token',
    '  doctor [--json]       check Node, packages, stores, ports, disk and the broker; say what to fix',
    '  seed [--contacts N] [--events N] [--sources K]   realistic sample data through the ingest API (resumable)',
    '  keys                  print fresh secrets of one deployment (admin token, principal key pair) as env lines',
    '  dlq list <topic>      dead letters waiting on <topic>.dlq: error, key, offset, time (--json, --all, --limit N)',
    '  dlq replay <topic>    re-produce them to their source topic; a second replay does not repeat them',
  ].join('\n');
}

async function main(argv) {
  const [name, ...args] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return 0;
  }
  // Own keys only: `meld constructor` is an unknown command, not Object.prototype's (ADR 0124).
  const load = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!load) {
    console.error(`meld: unknown command "${name}"\n${usage()}`);
    return 2;
  }
  const command = load();
  // Every verb answers --help with its help and does nothing else (`meld start --help` starts nothing).
  if (wantsHelp(args)) {
    console.log(command.help);
    return 0;
  }
  try {
    return (await command.run(args)) ?? 0;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`${err.message}\n${command.help}`);
    return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code) process.exitCode = code;
  },
  (err) => {
    console.error(`meld: ${err && err.message ? err.message : err}`);
    process.exitCode = 1;
  },
);
