'use strict';
// `meld test` / `npm test`: the same set-up as `npm start` (install, build, stack,
// migrations on the *test* databases), then lint, type check and every Jest test
// (unit, integration, e2e) on the real stack. Ends with one summary line.
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { root, stackDir, step, ensureInstalled, build, stackUp, stackEnv } = require('../lib');
const { migrate } = require('./migrate');
const { parseVerbArgs } = require('../args');

const help = [
  'usage: meld test [--no-static] [pattern...] [-- jest options]',
  '  the set-up of `meld start`, then lint, type check and every Jest test on the real stack;',
  '  patterns narrow Jest to matching test files; --no-static skips lint and type check',
].join('\n');

function check(title, cmd, args, env) {
  const done = step(title);
  const res = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env });
  const ok = res.status === 0;
  if (ok) done();
  else process.stdout.write(`  ✗ ${title} failed\n`);
  return ok;
}

/**
 * Tests get a private dev broker, new for each run: apps of a running `npm start` share
 * the stack's broker and would otherwise join the tests' consumer groups, and every run
 * starts with empty topics.
 */
async function freshTestBroker() {
  const stack = require('../../stack');
  const done = step('private Kafka broker for the tests');
  await stack.stopBroker('kafka-test');
  const { brokers } = await stack.startBroker({ name: 'kafka-test' });
  done(brokers);
  return brokers;
}

async function run(args = []) {
  const { values, positionals, rest } = parseVerbArgs('test', args, { options: { 'no-static': { type: 'boolean', default: false } }, positionals: true, passThrough: true });
  const started = Date.now();
  ensureInstalled();
  build();
  const stack = await stackUp();
  const testEnv = stackEnv(stack, 'test');
  if (!process.env.MELD_KAFKA_BROKERS) testEnv.MELD_KAFKA_BROKERS = await freshTestBroker();
  await migrate(testEnv);
  const env = { ...process.env, ...testEnv, MELD_ADMIN_TOKEN: 'meld-test-admin', LOG_LEVEL: process.env.LOG_LEVEL || 'warn' };

  const quick = values['no-static'];
  const jestArgs = [...positionals, ...rest];
  const checks = quick
    ? []
    : [
        // The boundary rule silently skips itself without a cached project graph: compute it first.
        ['project graph (nx)', 'npx', ['nx', 'show', 'projects']],
        ['lint (eslint, Nx module boundaries)', 'npx', ['eslint', '.', '--max-warnings', '0']],
        ['type check (tsc)', 'npx', ['tsc', '-p', 'tsconfig.json', '--noEmit']],
      ].map(([title, cmd, cmdArgs]) => check(title, cmd, cmdArgs, env));

  // Two phases: e2e suites each run a whole system (its own broker) on the shared test
  // databases, so one system's outbox relays, woken by every write's NOTIFY (ADR 0212), would
  // publish another's rows to the wrong broker. They run one at a time, after the rest. So do
  // messaging's integration specs: each runs messaging's delivery side, whose sweep and webhook
  // claims take any due row of the shared database (ADRs 0153, 0252), as replicas should (ADR 0266).
  const serial = ['**/*.e2e-spec.ts', '**/apps/messaging/test/**/*.integration-spec.ts'];
  const phases = [
    ['jest (unit, integration)', ['--maxWorkers=2', '--testPathIgnorePatterns', '/node_modules/', '/dist/', '\\.e2e-spec\\.ts$', '/apps/messaging/test/']],
    ['jest (e2e and messaging, one system at a time)', ['--runInBand', '--testMatch', ...serial]],
  ];
  let passed = checks.filter(Boolean).length;
  let failed = checks.length - passed;
  let skipped = 0;
  for (const [title, phaseArgs] of phases) {
    const results = path.join(stackDir, 'test-results.json');
    fs.rmSync(results, { force: true });
    const done = step(title);
    const jest = spawnSync('npx', ['jest', '--ci', '--passWithNoTests', ...phaseArgs, '--json', `--outputFile=${results}`, ...jestArgs], { cwd: root, stdio: 'inherit', env });
    done();
    if (fs.existsSync(results)) {
      const r = JSON.parse(fs.readFileSync(results, 'utf8'));
      passed += r.numPassedTests;
      failed += r.numFailedTests + (r.numRuntimeErrorTestSuites || 0);
      skipped += r.numPendingTests + r.numTodoTests;
      if (jest.status !== 0 && r.numFailedTests + (r.numRuntimeErrorTestSuites || 0) === 0) failed += 1;
    } else {
      failed += 1;
    }
  }
  const minutes = ((Date.now() - started) / 60000).toFixed(1);
  console.log(`\nnpm test finished in ${minutes} min (counts include the lint and type-check steps)`);
  console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  return failed ? 1 : 0;
}

module.exports = { run, help };
