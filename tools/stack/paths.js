'use strict';
// Where the local stack keeps its state (see docs/ENGINEERING.md, ".stack/").
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
// Through a symlink (a second checkout sharing one running stack) the real path: services are
// recognised by their data paths in their command lines, which name the real one.
const STACK = realPath(path.join(ROOT, '.stack'));
const LOGS = path.join(STACK, 'logs');
const PIDS = path.join(STACK, 'pids');
const BIN = path.join(STACK, 'bin');
const ENV_FILE = path.join(STACK, 'env.json');

function realPath(p) {
  try {
    return fs.realpathSync(p);
  } catch (err) {
    if (err.code === 'ENOENT') return p;
    throw err;
  }
}

const pidFile = (name) => path.join(PIDS, `${name}.pid`);
const logFile = (name) => path.join(LOGS, `${name}.log`);
const dataDir = (name) => path.join(STACK, name);

function ensureDir(dir, mode = 0o755) {
  fs.mkdirSync(dir, { recursive: true, mode });
  return dir;
}

// Write to a temp file and rename, so a reader never sees a half-written file.
function writeFileAtomic(file, text, mode = 0o644) {
  ensureDir(path.dirname(file));
  const tmp = `${file}.tmp.${process.pid}.${Date.now()}`;
  fs.writeFileSync(tmp, text, { mode });
  fs.renameSync(tmp, file);
}

function readText(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (err.code === 'ENOENT') return null;
    throw err;
  }
}

function removeFile(file) {
  fs.rmSync(file, { force: true });
}

module.exports = { ROOT, STACK, LOGS, PIDS, BIN, ENV_FILE, pidFile, logFile, dataDir, ensureDir, writeFileAtomic, readText, removeFile };
