'use strict';
// A MELD_* URL that points at the stack's own loopback port is "ours" (e.g. `meld test`
// exported it from .stack/env.json); anything else is an external service to use as is.
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

function isLocal(url, port) {
  try {
    const u = new URL(url);
    return LOOPBACK.has(u.hostname) && Number(u.port) === port;
  } catch {
    return false;
  }
}

function withPath(url, pathname) {
  const u = new URL(url);
  u.pathname = pathname;
  return u.toString();
}

/** The URL with its password masked, for messages and logs. */
function redact(url) {
  try {
    const u = new URL(url);
    if (!u.password) return url;
    u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

module.exports = { isLocal, withPath, redact };
