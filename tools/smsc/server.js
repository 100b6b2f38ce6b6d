#!/usr/bin/env node
'use strict';
// CLI for the SMSC simulator; the local-stack manager spawns exactly
//   node tools/smsc/server.js --port 52775 --host 127.0.0.1
// With --control-port (the stack: SMPP port + 1), a person or a test sends a mobile-originated
// message over HTTP: POST /mo {"from":"+447700900123","to":"SHOP","text":"STOP"} → 200
// {"sessions":[command_status, …]} (`meld smsc send` does this); POST /stall makes it a hung SMSC
// (connections open, nothing answered) and POST /resume answers again, both → 200 {"stalled":…}
// (`meld smsc stall` / `meld smsc resume`, ADR 0348).
// Logs are JSON lines (pino) on stdout, one per PDU of interest. SIGTERM/SIGINT close the
// sessions and the listener, then exit 0; a listen failure (port in use, …) exits 1.
const http = require('node:http');
const { parseArgs } = require('node:util');
const pino = require('pino');
const { startSmsc } = require('./simulator');

const USAGE = 'usage: node tools/smsc/server.js [--port 52775] [--host 127.0.0.1] [--receipt-delay-ms 100] [--control-port N]';

function readOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string', default: '52775' },
      host: { type: 'string', default: '127.0.0.1' },
      'receipt-delay-ms': { type: 'string', default: '100' },
      'control-port': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  const port = Number(values.port);
  const receiptDelayMs = Number(values['receipt-delay-ms']);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid --port ${values.port}`);
  if (!Number.isFinite(receiptDelayMs) || receiptDelayMs < 0) {
    throw new Error(`invalid --receipt-delay-ms ${values['receipt-delay-ms']}`);
  }
  const controlPort = values['control-port'] === undefined ? null : Number(values['control-port']);
  if (controlPort !== null && (!Number.isInteger(controlPort) || controlPort < 0 || controlPort > 65535)) throw new Error(`invalid --control-port ${values['control-port']}`);
  return { help: values.help, host: values.host, port, receiptDelayMs, controlPort };
}

/** POST /mo with {from, to, text}: the simulator's mobile-originated message; POST /stall and /resume: a hung SMSC and back. For people and tests. */
function startControl(smsc, host, port, logger) {
  const server = http.createServer((req, res) => {
    const answer = (status, body) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method === 'POST' && (req.url === '/stall' || req.url === '/resume')) {
      req.resume();
      if (req.url === '/stall') smsc.stall();
      else smsc.resume();
      return answer(200, { stalled: smsc.stalled() });
    }
    if (req.method !== 'POST' || req.url !== '/mo') return answer(404, { message: 'POST /mo {from, to, text}, POST /stall, POST /resume' });
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => { raw += chunk; if (raw.length > 4096) req.destroy(); });
    req.on('end', async () => {
      let body;
      try {
        body = JSON.parse(raw);
      } catch {
        return answer(400, { message: 'body: not JSON' });
      }
      for (const field of ['from', 'to', 'text']) {
        if (!body || typeof body[field] !== 'string' || !body[field]) return answer(400, { message: `${field}: a non-empty string is required` });
      }
      answer(200, { sessions: await smsc.mo(body) });
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      logger.info({ event: 'control_listening', port: server.address().port }, `SMSC control on http://${host}:${server.address().port}/mo`);
      resolve(server);
    });
  });
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

  const control = options.controlPort === null ? null : await startControl(smsc, options.host, options.controlPort, logger).catch((err) => {
    logger.error({ event: 'control_listen_failed', error: err.message }, 'SMSC control port could not listen');
    process.exit(1);
  });

  let stopping = false;
  const stop = async (signal) => {
    if (stopping) return; // a second signal while closing changes nothing
    stopping = true;
    logger.info({ event: 'stopping', signal, stats: smsc.stats() }, 'SMSC simulator stopping');
    control?.close();
    await smsc.close();
    logger.info({ event: 'stopped' }, 'SMSC simulator stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main();
