'use strict';
// Kafka-protocol development brokers: kafka-dev-broker.c on librdkafka's mock cluster, compiled on
// first use. The shared one is service "kafka" (.stack/kafka.brokers); tests may start private
// ones under other names (.stack/<name>.brokers). The mock keeps messages in memory only.
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, STACK, BIN, ENV_FILE, ensureDir, readText, removeFile } = require('./paths');
const { ensureCommand, ensurePackage } = require('./packages');
const { spawnDetached } = require('./procs');
const { run, kafkaApiVersions } = require('./probes');

const SOURCE = path.join(__dirname, 'kafka-dev-broker.c');
// The long-poll proxy in front of the mock (ADR 0260), compiled into the same binary.
const SOURCES = [SOURCE, path.join(__dirname, 'kafka-long-poll.c'), path.join(__dirname, 'kafka-long-poll.h')];
const BINARY = path.join(BIN, 'kafka-dev-broker');
const TOPICS_FILE = path.join(ROOT, 'libs', 'contracts', 'src', 'topics.json');
const MOCK_HEADER = '/usr/include/librdkafka/rdkafka_mock.h';

const mtime = (file) => fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? -1;

/** Compile the broker when the binary is missing or older than one of its sources. */
async function buildBroker(log) {
  if (mtime(BINARY) >= Math.max(...SOURCES.map(mtime))) return BINARY;
  const cc = await ensureCommand('cc', 'build-essential', log);
  await ensurePackage({ pkg: 'librdkafka-dev', what: `the librdkafka mock header ${MOCK_HEADER}`, present: () => fs.existsSync(MOCK_HEADER) }, log);
  ensureDir(BIN);
  log(`kafka       compiling ${path.relative(ROOT, SOURCE)} -> ${path.relative(ROOT, BINARY)}`);
  const tmp = `${BINARY}.tmp.${process.pid}`; // build aside and rename: a parallel build never sees half a binary
  try {
    await run(cc, ['-O2', '-Wall', '-pthread', '-o', tmp, ...SOURCES.filter((f) => f.endsWith('.c')), '-lrdkafka'], { timeoutMs: 120000 });
    fs.renameSync(tmp, BINARY);
  } finally {
    removeFile(tmp);
  }
  return BINARY;
}

/** Broker arguments for the contract topics: every name, plus `<name>.dlq` where `dlq` is true. */
function contractTopics() {
  const spec = JSON.parse(fs.readFileSync(TOPICS_FILE, 'utf8'));
  const names = [];
  for (const t of spec.topics) {
    const suffix = t.partitions ? `:${t.partitions}` : '';
    names.push(t.name + suffix);
    if (t.dlq) names.push(`${t.name}.dlq${suffix}`);
  }
  return { names, partitions: Number(process.env.MELD_KAFKA_PARTITIONS) || spec.partitions || 8 };
}

function recordedBrokers() {
  try {
    return JSON.parse(readText(ENV_FILE) || '{}').MELD_KAFKA_BROKERS || null;
  } catch {
    return null;
  }
}

/** A service object (see index.js) for the broker instance `name`. */
function brokerService(name, { partitions, topics, messageMaxBytes } = {}) {
  const file = path.join(STACK, `${name}.brokers`);
  const current = () => (readText(file) || '').trim() || null;
  return {
    name,
    port: null, // random port, chosen by the mock cluster
    what: 'ApiVersions',
    stopSignal: 'SIGTERM',
    brokersFile: file,
    matches: (cmd) => cmd.includes('kafka-dev-broker') && cmd.includes(file),
    localEnv() {
      const brokers = current();
      return brokers && { dev: { MELD_KAFKA_BROKERS: brokers }, test: { MELD_KAFKA_BROKERS: brokers } };
    },
    externalEnv(env) {
      const brokers = env.MELD_KAFKA_BROKERS;
      // Ours when it is (or was, before a restart) the address of this stack's broker.
      if (name !== 'kafka' || !brokers || brokers === current() || brokers === recordedBrokers()) return null;
      return { dev: { MELD_KAFKA_BROKERS: brokers }, test: { MELD_KAFKA_BROKERS: brokers } };
    },
    async probe(env) {
      if (!env) throw new Error(`${file} not written yet`);
      for (const broker of env.MELD_KAFKA_BROKERS.split(',')) await kafkaApiVersions(broker.trim());
    },
    async start({ log }) {
      const bin = await buildBroker(log);
      const contract = contractTopics();
      removeFile(file); // readiness waits for the new broker to write it
      const args = ['--bootstrap-file', file, '--partitions', String(partitions || contract.partitions)];
      // Kafka's own default unless a test asks for another limit (ADR 0346).
      if (messageMaxBytes !== undefined) args.push('--message-max-bytes', String(messageMaxBytes));
      args.push(...(topics || contract.names));
      return spawnDetached(name, bin, args, { cwd: STACK });
    },
    cleanup: () => removeFile(file),
  };
}

module.exports = { brokerService, buildBroker, contractTopics };
