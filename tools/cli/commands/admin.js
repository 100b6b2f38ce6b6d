'use strict';
// `meld admin <verb> <path> [--data JSON]`: a thin client of the running gateway's admin API
// (`/admin/v1`). The gateway comes from MELD_GATEWAY_URL or MELD_PORT, the token from
// MELD_ADMIN_TOKEN, with the local defaults `npm start` uses. Prints the JSON response.
const fs = require('node:fs');
const { UsageError } = require('../args');

const VERBS = { get: 'GET', post: 'POST', put: 'PUT', patch: 'PATCH', delete: 'DELETE' };

function usage() {
  return [
    'usage: meld admin <get|post|put|patch|delete> <path> [--data JSON | --data @file.json | --data -]',
    '  path is relative to /admin/v1, e.g. `organizations`, `projects/shop/event-types`',
    '  env: MELD_GATEWAY_URL or MELD_PORT (default 8080), MELD_ADMIN_TOKEN (default meld-dev-admin)',
    'examples:',
    '  meld admin post organizations --data \'{"name":"Acme","plan":"s"}\'',
    '  meld admin get projects/acme-shop',
  ].join('\n');
}

/** `call(method, path, body?)` → { status, body } against the admin API of the running gateway. */
function adminClient(env = process.env) {
  const base = (env.MELD_GATEWAY_URL || `http://127.0.0.1:${env.MELD_PORT || 8080}`).replace(/\/+$/, '');
  const token = env.MELD_ADMIN_TOKEN || 'meld-dev-admin';
  async function call(method, path, body) {
    const url = `${base}/admin/v1/${String(path).replace(/^\/+/, '').replace(/^admin\/v1\/?/, '')}`;
    let res;
    try {
      res = await fetch(url, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30000),
      });
    } catch (err) {
      const why = (err && err.cause && err.cause.message) || (err && err.message) || String(err);
      throw new Error(`cannot reach the gateway at ${base} (is \`npm start\` running?): ${why}`);
    }
    const text = await res.text();
    let parsed = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON: keep the text */
    }
    return { status: res.status, body: parsed };
  }
  return { base, call };
}

/** Like `call`, but a non-2xx answer throws with the API's message (and the fields it names). */
async function expectOk(client, method, path, body) {
  const { status, body: answer } = await client.call(method, path, body);
  if (status >= 200 && status < 300) return answer;
  const message = answer && typeof answer === 'object' ? answer.message : answer;
  throw new Error(`${method} /admin/v1/${path} answered ${status}: ${message || 'no message'}`);
}

function readData(value) {
  if (value === undefined) return undefined;
  const text = value === '-' ? fs.readFileSync(0, 'utf8') : value.startsWith('@') ? fs.readFileSync(value.slice(1), 'utf8') : value;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`meld admin: --data is not JSON: ${err.message}`);
  }
}

function parseArgs(args) {
  const positional = [];
  let data;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--data' || arg === '-d') {
      if (i + 1 >= args.length) throw new UsageError(`meld admin: ${arg} needs a value (JSON, @file.json or -)`);
      data = args[++i];
    }    else if (arg.startsWith('--data=')) data = arg.slice('--data='.length);
    else if (arg.startsWith('-') && arg !== '-') throw new UsageError(`meld admin: unknown option "${arg}"`);
    else positional.push(arg);
  }
  return { verb: positional[0], path: positional[1], extra: positional.slice(2), data };
}

async function run(args) {
  const { verb, path, extra, data } = parseArgs(args);
  if (!verb || verb === '--help' || verb === '-h' || verb === 'help') {
    console.log(usage());
    return verb ? 0 : 2;
  }
  const method = Object.hasOwn(VERBS, verb.toLowerCase()) ? VERBS[verb.toLowerCase()] : undefined;
  if (!method || !path || extra.length) {
    console.error(`meld admin: ${!method ? `unknown verb "${verb}"` : !path ? 'missing path' : `unexpected argument "${extra[0]}"`}\n${usage()}`);
    return 2;
  }
  // fetch refuses a GET with a body, which would read as an unreachable gateway.
  if (data !== undefined && method === 'GET') throw new UsageError(`meld admin: --data goes with post, put, patch or delete, not ${verb}`);
  const { status, body } = await adminClient().call(method, path, readData(data));
  const out = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body, null, 2);
  if (status >= 400) {
    if (out) console.error(out);
    return 1;
  }
  if (out) console.log(out);
  return 0;
}

module.exports = { run, adminClient, expectOk, get help() {
  return usage();
} };
