'use strict';
// ClickHouse (Debian's 18.16) on 127.0.0.1: HTTP 58123, native 59000. The Debian package does
// not start a server, so we run clickhouse-server with our own config, everything under
// .stack/clickhouse and a modest memory budget (the box is shared with everything else).
const path = require('node:path');
const { dataDir, ensureDir, writeFileAtomic } = require('./paths');
const { ensureCommand } = require('./packages');
const { spawnDetached } = require('./procs');
const { httpRequest } = require('./probes');
const { isLocal } = require('./urls');

const HTTP_PORT = 58123;
const TCP_PORT = 59000;
const DIR = dataDir('clickhouse');
const URL_LOCAL = `http://127.0.0.1:${HTTP_PORT}`;
/** The read-only user of the apps' request reads (ADR 0114). */
const READER = 'meld_reader';
const READ_URL_LOCAL = `http://${READER}@127.0.0.1:${HTTP_PORT}`;

// No interserver port, no query_log, no clusters/ZooKeeper; logs go to the console, which the
// stack appends to .stack/logs/clickhouse.log.
const configXml = () => `<?xml version="1.0"?>
<!-- written by tools/stack/clickhouse.js on every start -->
<yandex>
    <logger>
        <level>warning</level> <!-- "information" logs every HTTP query -->
        <console>1</console>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <http_port>${HTTP_PORT}</http_port>
    <tcp_port>${TCP_PORT}</tcp_port>
    <max_connections>1024</max_connections>
    <keep_alive_timeout>3</keep_alive_timeout>
    <max_concurrent_queries>100</max_concurrent_queries>
    <uncompressed_cache_size>268435456</uncompressed_cache_size>
    <mark_cache_size>67108864</mark_cache_size>
    <path>${path.join(DIR, 'data')}/</path>
    <tmp_path>${path.join(DIR, 'tmp')}/</tmp_path>
    <user_files_path>${path.join(DIR, 'user_files')}/</user_files_path>
    <format_schema_path>${path.join(DIR, 'format_schemas')}/</format_schema_path>
    <users_config>users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <mlock_executable>false</mlock_executable>
    <max_session_timeout>3600</max_session_timeout>
    <default_session_timeout>60</default_session_timeout>
</yandex>
`;

const usersXml = () => `<?xml version="1.0"?>
<!-- written by tools/stack/clickhouse.js on every start -->
<yandex>
    <profiles>
        <default>
            <max_memory_usage>4000000000</max_memory_usage>
            <max_memory_usage_for_all_queries>8000000000</max_memory_usage_for_all_queries>
            <use_uncompressed_cache>0</use_uncompressed_cache>
            <load_balancing>random</load_balancing>
        </default>
        <readonly>
            <readonly>1</readonly>
        </readonly>
        <!-- ADR 0114: the apps' request reads. readonly=2 refuses writes and DDL but lets each
             query set its own max_execution_time and max_memory_usage (readonly=1 would not). -->
        <meld_reader>
            <readonly>2</readonly>
            <max_memory_usage>4000000000</max_memory_usage>
            <use_uncompressed_cache>0</use_uncompressed_cache>
        </meld_reader>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks>
                <ip>127.0.0.1</ip>
                <ip>::1</ip>
            </networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
        <${READER}>
            <password></password>
            <networks>
                <ip>127.0.0.1</ip>
                <ip>::1</ip>
            </networks>
            <profile>meld_reader</profile>
            <quota>default</quota>
        </${READER}>
    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries>
                <errors>0</errors>
                <result_rows>0</result_rows>
                <read_rows>0</read_rows>
                <execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>
`;

async function start({ log }) {
  const cmd = await ensureCommand('clickhouse-server', 'clickhouse-server', log);
  for (const sub of ['data', 'tmp', 'user_files', 'format_schemas']) ensureDir(path.join(DIR, sub));
  writeFileAtomic(path.join(DIR, 'config.xml'), configXml());
  writeFileAtomic(path.join(DIR, 'users.xml'), usersXml());
  // Merges and sink inserts are background work: on one machine the request path (Postgres,
  // the apps' handlers) goes first. MELD_CLICKHOUSE_NICE=0 turns this off.
  const nice = Number(process.env.MELD_CLICKHOUSE_NICE ?? 19);
  return spawnDetached('clickhouse', cmd, [`--config-file=${path.join(DIR, 'config.xml')}`], { cwd: DIR, nice: Number.isInteger(nice) && nice > 0 ? Math.min(nice, 19) : 0 });
}

async function probe(env) {
  const text = await httpRequest(`${env.MELD_CLICKHOUSE_URL.replace(/\/+$/, '')}/ping`);
  if (text.trim() !== 'Ok.') throw new Error(`/ping answered ${JSON.stringify(text)}`);
}

async function afterReady() {
  for (const db of ['meld', 'meld_test']) {
    await httpRequest(`${URL_LOCAL}/`, { method: 'POST', body: `CREATE DATABASE IF NOT EXISTS ${db}`, timeoutMs: 30000 });
  }
  // A server started by an older checkout lacks the reader: ClickHouse reloads users.xml by
  // itself within seconds of a change, so rewriting it is enough (no restart).
  writeFileAtomic(path.join(DIR, 'users.xml'), usersXml());
  const deadline = Date.now() + 20000;
  for (;;) {
    try {
      await httpRequest(`${URL_LOCAL}/?user=${READER}`, { method: 'POST', body: 'SELECT 1', timeoutMs: 5000 });
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`clickhouse: the read-only user ${READER} is not accepted after rewriting users.xml: ${err.message}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

module.exports = {
  name: 'clickhouse',
  port: HTTP_PORT,
  what: 'HTTP /ping',
  stopSignal: 'SIGTERM',
  matches: (cmd) => cmd.includes('clickhouse') && cmd.includes(DIR),
  localEnv: () => ({
    dev: { MELD_CLICKHOUSE_URL: URL_LOCAL, MELD_CLICKHOUSE_READ_URL: READ_URL_LOCAL, MELD_CLICKHOUSE_DB: 'meld' },
    test: { MELD_CLICKHOUSE_URL: URL_LOCAL, MELD_CLICKHOUSE_READ_URL: READ_URL_LOCAL, MELD_CLICKHOUSE_DB: 'meld_test' },
  }),
  externalEnv(env) {
    const url = env.MELD_CLICKHOUSE_URL;
    if (!url || isLocal(url, HTTP_PORT)) return null;
    const db = env.MELD_CLICKHOUSE_DB || 'meld';
    return { dev: { MELD_CLICKHOUSE_URL: url, MELD_CLICKHOUSE_DB: db }, test: { MELD_CLICKHOUSE_URL: url, MELD_CLICKHOUSE_DB: /test/i.test(db) ? db : 'meld_test' } };
  },
  probe,
  start,
  afterReady,
};
