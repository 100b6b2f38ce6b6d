'use strict';
// `meld smsc`: the SMSC simulator in the foreground (the stack runs the same program detached);
// `meld smsc send`: a mobile-originated message through a running simulator's control port;
// `meld smsc stall` / `resume`: the running simulator hangs (connections open, nothing answered) and answers again (ADR 0348).
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { parseArgs } = require('node:util');

const help = [
  'usage: meld smsc [--port 52775] [--host 127.0.0.1] [--receipt-delay-ms 100] [--control-port 52776]',
  '  the SMPP 3.4 simulator in the foreground: destination ending 13 → UNDELIV, 14 → EXPIRED, 99 → submit error, else DELIVRD',
  '       meld smsc send --from +447700900123 --to SHOP --text STOP [--control http://127.0.0.1:52776]',
  '  a mobile-originated SMS (e.g. an opt-out keyword) to every session bound to the running simulator',
  '       meld smsc stall|resume [--control http://127.0.0.1:52776]',
  '  the running simulator stops answering, its connections left open (a hung SMSC), or answers again',
].join('\n');

async function send(args) {
  const { values } = parseArgs({ args, options: { from: { type: 'string' }, to: { type: 'string' }, text: { type: 'string' }, control: { type: 'string', default: 'http://127.0.0.1:52776' } } });
  for (const field of ['from', 'to', 'text']) {
    if (!values[field]) {
      process.stderr.write(`--${field} is required\n${help}\n`);
      return 2;
    }
  }
  const res = await fetch(`${values.control.replace(/\/+$/, '')}/mo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ from: values.from, to: values.to, text: values.text }) });
  const body = await res.json();
  if (!res.ok) {
    process.stderr.write(`${body.message}\n`);
    return 1;
  }
  process.stdout.write(`sent to ${body.sessions.length} session(s); answers: ${JSON.stringify(body.sessions)}\n`);
  return body.sessions.length ? 0 : 1;
}

async function stallOrResume(verb, args) {
  const { values } = parseArgs({ args, options: { control: { type: 'string', default: 'http://127.0.0.1:52776' } } });
  const res = await fetch(`${values.control.replace(/\/+$/, '')}/${verb}`, { method: 'POST' });
  const body = await res.json();
  if (!res.ok) {
    process.stderr.write(`${body.message}\n`);
    return 1;
  }
  process.stdout.write(body.stalled ? 'stalled: connections stay open, nothing is answered\n' : 'answering\n');
  return 0;
}

function run(args) {
  if (args[0] === 'send') return send(args.slice(1));
  if (args[0] === 'stall' || args[0] === 'resume') return stallOrResume(args[0], args.slice(1));
  const res = spawnSync(process.execPath, [path.join(__dirname, '../../smsc/server.js'), ...args], { stdio: 'inherit' });
  return res.status ?? 1;
}

module.exports = { run, help };
