'use strict';
// Installs missing Debian packages (as root), so `meld stack up` works on a fresh machine.
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { logFile, ensureDir, LOGS } = require('./paths');

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** Absolute path of an executable on PATH (plus the sbin dirs a non-root PATH lacks), or null. */
function which(cmd) {
  const dirs = (process.env.PATH || '').split(':').concat(['/usr/local/sbin', '/usr/sbin', '/sbin']);
  for (const dir of dirs) {
    const file = path.join(dir || '.', cmd);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return null;
}

let updated = null; // apt-get update runs once per process
let queue = Promise.resolve(); // apt/dpkg hold a lock: one install at a time

function apt(args) {
  ensureDir(LOGS);
  const out = fs.openSync(logFile('apt'), 'a');
  return new Promise((resolve, reject) => {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const child = spawn('apt-get', args, { env, stdio: ['ignore', out, out] });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`apt-get ${args.join(' ')} exited with ${code}`))));
  }).finally(() => fs.closeSync(out));
}

/**
 * Make sure `present()` holds, installing Debian package `pkg` if it does not.
 * `what` names the missing thing in messages (a command or a file).
 */
function ensurePackage({ pkg, what, present }, log = () => {}) {
  if (present()) return Promise.resolve();
  if (!isRoot()) {
    return Promise.reject(new Error(`${what} is missing: install the Debian package "${pkg}" (sudo apt-get install -y ${pkg}) or run this as root`));
  }
  const job = queue.then(async () => {
    if (present()) return;
    log(`installing Debian package ${pkg} (apt-get; output in ${logFile('apt')})`);
    try {
      if (!updated) {
        updated = apt(['update']).catch((err) => {
          updated = null; // let the next install try again
          throw err;
        });
      }
      await updated;
      await apt(['install', '-y', pkg]);
    } catch (err) {
      throw new Error(`could not install the Debian package "${pkg}" (needed for ${what}): ${err.message}; see ${logFile('apt')}`);
    }
    if (!present()) throw new Error(`installed the Debian package "${pkg}" but ${what} is still missing`);
  });
  queue = job.catch(() => {});
  return job;
}

/** Path of `cmd`, installing `pkg` first when it is missing. */
async function ensureCommand(cmd, pkg, log) {
  await ensurePackage({ pkg, what: `the command ${cmd}`, present: () => which(cmd) !== null }, log);
  return which(cmd);
}

module.exports = { isRoot, which, ensurePackage, ensureCommand };
