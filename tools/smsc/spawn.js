'use strict';
// A private SMSC simulator process (tools/smsc/server.js) on free ports, with its HTTP control
// port: for tests that run the apps as processes and must send mobile-originated messages
// without sharing the stack's simulator (which may run without a control port).
const { spawn } = require('node:child_process');
const path = require('node:path');
const readline = require('node:readline');

const SERVER = path.join(__dirname, 'server.js');

/**
 * Starts the simulator and resolves once both its SMPP and control ports listen.
 * @returns {Promise<{ smppUrl: string, controlUrl: string, lines: object[], stop(): Promise<void> }>}
 *   lines: the simulator's JSON log records so far (it logs no message text).
 */
function spawnSmsc({ receiptDelayMs = 50, timeoutMs = 15000 } = {}) {
  const child = spawn(process.execPath, [SERVER, '--port', '0', '--control-port', '0', '--receipt-delay-ms', String(receiptDelayMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = [];
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  return new Promise((resolve, reject) => {
    const ports = {};
    const timer = setTimeout(() => stop().then(() => reject(new Error(`the SMSC simulator did not listen within ${timeoutMs} ms`))), timeoutMs);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the SMSC simulator exited (${code}) before it listened`));
    });
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      let record;
      try {
        record = JSON.parse(line);
      } catch {
        return;
      }
      lines.push(record);
      if (record.event === 'listening') ports.smpp = record.port;
      if (record.event === 'control_listening') ports.control = record.port;
      if (ports.smpp && ports.control && !ports.resolved) {
        ports.resolved = true;
        clearTimeout(timer);
        resolve({ smppUrl: `smpp://127.0.0.1:${ports.smpp}`, controlUrl: `http://127.0.0.1:${ports.control}`, lines, stop });
      }
    });
  });
}

module.exports = { spawnSmsc };
