'use strict';
// One-shot readiness checks that speak each service's protocol, and the wait loop around them.
const net = require('node:net');
const http = require('node:http');
const { execFile } = require('node:child_process');
const { sleep, isAlive, tailLog } = require('./procs');
const { logFile } = require('./paths');

const PROBE_TIMEOUT_MS = 3000;

/** Open a TCP connection, write `payload` (if any), resolve with the first `enough(buffer)` reply. */
function talk(host, port, payload, enough = () => true) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    let buf = Buffer.alloc(0);
    const done = (err, value) => {
      socket.destroy();
      if (err) reject(err);
      else resolve(value);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(new Error(`no answer from ${host}:${port}`)));
    socket.on('error', (err) => done(err));
    socket.on('connect', () => (payload ? socket.write(payload) : done(null, buf)));
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      if (enough(buf)) done(null, buf);
    });
    socket.on('end', () => done(new Error(`${host}:${port} closed the connection`)));
  });
}

const tcp = (host, port) => talk(host, port, null).then(() => true);

function resp(...args) {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}

/** Redis: (AUTH,) PING, expect +PONG (a server still loading its AOF answers -LOADING). */
async function redisPing(url) {
  const u = new URL(url);
  const auth = u.password ? resp('AUTH', ...(u.username ? [decodeURIComponent(u.username)] : []), decodeURIComponent(u.password)) : '';
  const want = u.password ? 2 : 1;
  const lines = (b) => b.toString().split('\r\n').filter(Boolean);
  const reply = await talk(u.hostname, Number(u.port || 6379), auth + resp('PING'), (b) => lines(b).length >= want || b.toString().startsWith('-'));
  const last = lines(reply).pop() || '';
  if (last !== '+PONG') throw new Error(`redis answered ${JSON.stringify(lines(reply).join(' '))}`);
  return true;
}

/** Kafka: ApiVersions v0 request, expect our correlation id and error code 0. */
async function kafkaApiVersions(hostPort) {
  const [host, port] = splitHostPort(hostPort);
  const clientId = Buffer.from('meld-stack');
  const body = Buffer.alloc(14 + clientId.length);
  body.writeInt32BE(10 + clientId.length, 0); // size of what follows
  body.writeInt16BE(18, 4); // ApiVersions
  body.writeInt16BE(0, 6); // version 0
  body.writeInt32BE(4242, 8); // correlation id
  body.writeInt16BE(clientId.length, 12);
  clientId.copy(body, 14);
  const reply = await talk(host, port, body, (b) => b.length >= 4 && b.length >= 4 + b.readInt32BE(0));
  if (reply.length < 10 || reply.readInt32BE(4) !== 4242 || reply.readInt16BE(8) !== 0) {
    throw new Error(`unexpected ApiVersions reply from ${hostPort}`);
  }
  return true;
}

function splitHostPort(hostPort) {
  const i = hostPort.lastIndexOf(':');
  return [hostPort.slice(0, i).replace(/^\[|\]$/g, ''), Number(hostPort.slice(i + 1))];
}

/** HTTP request to a ClickHouse-style server; resolves with the body of a 200 answer. */
function httpRequest(url, { method = 'GET', body, timeoutMs = PROBE_TIMEOUT_MS } = {}) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const headers = {};
    if (u.username) headers['X-ClickHouse-User'] = decodeURIComponent(u.username);
    if (u.password) headers['X-ClickHouse-Key'] = decodeURIComponent(u.password);
    const req = http.request({ host: u.hostname, port: u.port || 80, path: u.pathname + u.search, method, headers, timeout: timeoutMs }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`HTTP ${res.statusCode}: ${text.trim().slice(0, 300)}`))));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${u.host}`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Run a command; resolves with stdout, rejects with its stderr in the message. */
function run(cmd, args, { input, env, timeoutMs = 30000, uid, gid, cwd } = {}) {
  return new Promise((resolve, reject) => {
    const child = execFile(cmd, args, { env: env || process.env, timeout: timeoutMs, uid, gid, cwd, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) {
        err.message = `${cmd} ${args.join(' ')} failed: ${(stderr || err.message).trim()}`;
        reject(err);
      } else resolve(stdout);
    });
    if (input !== undefined) child.stdin.end(input);
  });
}

/**
 * Poll `probe` until it succeeds. Fails early when the process we started died, and on
 * timeout, with a message that names the service and points at its log.
 */
async function waitReady(name, probe, { timeoutMs, pid, what }) {
  const deadline = Date.now() + timeoutMs;
  let lastError = null;
  let delay = 50;
  for (;;) {
    try {
      await probe();
      return;
    } catch (err) {
      lastError = err;
    }
    if (pid && !isAlive(pid)) {
      throw new Error(`${name} exited while starting (${lastError.message}); see ${logFile(name)}\n${tailLog(name)}`);
    }
    if (Date.now() > deadline) {
      const where = pid ? `; see ${logFile(name)}\n${tailLog(name)}` : '';
      throw new Error(`${name} did not answer ${what} within ${Math.round(timeoutMs / 1000)}s (${lastError.message})${where}`);
    }
    await sleep(delay);
    delay = Math.min(delay * 2, 500);
  }
}

module.exports = { tcp, redisPing, kafkaApiVersions, httpRequest, run, waitReady, splitHostPort };
