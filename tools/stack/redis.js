'use strict';
// Redis on 127.0.0.1:56379, append-only file in .stack/redis: BullMQ queues must survive a restart.
const { dataDir, ensureDir } = require('./paths');
const { ensureCommand } = require('./packages');
const { spawnDetached } = require('./procs');
const { redisPing } = require('./probes');
const { isLocal, withPath } = require('./urls');

const PORT = 56379;
const DATA = dataDir('redis');

async function start({ log }) {
  const cmd = await ensureCommand('redis-server', 'redis-server', log);
  ensureDir(DATA);
  const args = [
    '--port', String(PORT),
    '--bind', '127.0.0.1',
    '--dir', DATA,
    '--save', '', // no RDB snapshots: the AOF below is the durable copy
    '--appendonly', 'yes',
    '--daemonize', 'no', // the stack detaches it and tracks its pid itself
    '--logfile', '', // stdout, i.e. .stack/logs/redis.log
  ];
  return spawnDetached('redis', cmd, args, { cwd: DATA });
}

module.exports = {
  name: 'redis',
  port: PORT,
  what: 'PING',
  stopSignal: 'SIGTERM',
  matches: (cmd) => cmd.includes('redis-server') && cmd.includes(String(PORT)),
  localEnv: () => ({ dev: { MELD_REDIS_URL: `redis://127.0.0.1:${PORT}/0` }, test: { MELD_REDIS_URL: `redis://127.0.0.1:${PORT}/1` } }),
  externalEnv(env) {
    const url = env.MELD_REDIS_URL;
    if (!url || isLocal(url, PORT)) return null;
    return { dev: { MELD_REDIS_URL: url }, test: { MELD_REDIS_URL: withPath(url, '/1') } };
  },
  probe: (env) => redisPing(env.MELD_REDIS_URL),
  start,
};
