'use strict';
// `meld stack up|down|status`: the local stack (tools/stack).
const { parseVerbArgs, UsageError } = require('../args');

const help = [
  'usage: meld stack up [service...] | down [service...] | status [--json]',
  '  services: postgres, redis, clickhouse, kafka, smsc (default: all); data stays in .stack/',
  '  status exits 3 when a service is down, 0 when every one is up or external (1: it could not tell)',
].join('\n');

function run(args) {
  const { values, positionals } = parseVerbArgs('stack', args, { options: { json: { type: 'boolean', default: false } }, positionals: true });
  const [verb, ...services] = positionals;
  if (!['up', 'down', 'status'].includes(verb)) throw new UsageError(`meld stack: ${verb ? `unknown action "${verb}"` : 'missing action'}`);
  if (values.json && verb !== 'status') throw new UsageError('meld stack: --json goes with status');
  if (verb === 'status' && services.length) throw new UsageError('meld stack: status takes no service (it lists them all)');
  const stack = require('../../stack');
  const unknown = services.find((name) => !stack.SERVICES.includes(name));
  if (unknown !== undefined) throw new UsageError(`meld stack: unknown service "${unknown}" (known: ${stack.SERVICES.join(', ')})`);
  return stack.runStackCommand(args);
}

module.exports = { run, help };
