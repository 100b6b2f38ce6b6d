#!/usr/bin/env node
'use strict';
// CLI for the SMSC simulator; the local-stack manager spawns exactly
//   node tools/smsc/server.js --port 52775 --host 127.0.0.1
// Logs are JSON lines (pino) on stdout, one per PDU of interest. SIGTERM/SIGINT close the
// sessions and the listener, then exit 0; a listen failure (port in use, …) exits 1.
const { parseArgs } = require('node:util');
const pino = require('pino');
const { startSmsc } = require('./simulator');

const USAGE = 'usage: node tools/smsc/server.js [--port 52775] [--host 127.0.0.1] [--receipt-delay-ms 100]';

function readOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string', default: '52775' },
      host: { type: 'string', default: '127.0.0.1' },
      'receipt-delay-ms': { type: 'string', default: '100' },
      help: { type: 'boolean', default: false },
    },
  });
  const port = Number(values.port);
  const receiptDelayMs = Number(values['receipt-delay-ms']);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid --port ${values.port}`);
  if (!Number.isFinite(receiptDelayMs) || receiptDelayMs < 0) {
    throw new Error(`invalid --receipt-delay-ms ${values['receipt-delay-ms']}`);
  }
  return { help: values.help, host: values.host, port, receiptDelayMs };
}

async function main() {
  let options;
  try {
    options = readOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${err.message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  // Synchronous destination: lines are on stdout (the stack's log file) before the process
  // exits, including the last ones written during shutdown.
  const logger = pino({ name: 'smsc' }, pino.destination({ dest: 1, sync: true }));
  let smsc;
  try {
    smsc = await startSmsc({ host: options.host, port: options.port, receiptDelayMs: options.receiptDelayMs, logger });
  } catch (err) {
    logger.error({ event: 'listen_failed', error: err.message, host: options.host, port: options.port }, 'SMSC simulator could not listen');
    process.exit(1);
  }

  let stopping = false;
  const stop = async (signal) => {
    if (stopping) return; // a second signal while closing changes nothing
    stopping = true;
    logger.info({ event: 'stopping', signal, stats: smsc.stats() }, 'SMSC simulator stopping');
    await smsc.close();
    logger.info({ event: 'stopped' }, 'SMSC simulator stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main();
