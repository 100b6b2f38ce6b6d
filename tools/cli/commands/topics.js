'use strict';
// `meld topics`: creates missing topics on a real Kafka cluster (compose, k8s Job).
// The development broker pre-creates them and does not implement CreateTopics.
const path = require('node:path');
const { root, step } = require('../lib');

const help = [
  'usage: meld topics',
  '  creates missing Kafka topics on a real cluster (MELD_KAFKA_BROKERS; the dev broker has them)',
  '  copies: MELD_KAFKA_REPLICATION_FACTOR (default 3, or fewer when the cluster has fewer brokers;',
  '  -1: the brokers\' default.replication.factor), MELD_KAFKA_MIN_INSYNC_REPLICAS (default 2 with 3 copies)',
].join('\n');

const REPLICATION_VAR = 'MELD_KAFKA_REPLICATION_FACTOR';
const MIN_INSYNC_VAR = 'MELD_KAFKA_MIN_INSYNC_REPLICAS';

function integer(env, name) {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^-?\d+$/.test(raw.trim())) throw new Error(`${name}: must be an integer, got "${raw}"`);
  return Number(raw);
}

/**
 * How many copies of each topic `meld topics` creates, and how many must have a write before an
 * `acks: -1` producer is answered (ADR 0356). Not the brokers' defaults, which are 1 and 1 on
 * Apache Kafka: one disk would then hold the only copy of every event answered with 202. Three
 * copies (fewer on a smaller cluster: compose and the local overlay run one broker), two in sync.
 * `MELD_KAFKA_REPLICATION_FACTOR=-1` leaves both to the brokers' configuration.
 */
function topicReplication(env, brokerCount) {
  const wanted = integer(env, REPLICATION_VAR);
  const minInsync = integer(env, MIN_INSYNC_VAR);
  if (wanted !== undefined && wanted !== -1 && wanted < 1) throw new Error(`${REPLICATION_VAR}: must be -1 (the brokers' default) or at least 1, got ${wanted}`);
  if (minInsync !== undefined && minInsync < 1) throw new Error(`${MIN_INSYNC_VAR}: must be at least 1, got ${minInsync}`);
  if (wanted === -1) return { replicationFactor: -1, minInsyncReplicas: minInsync };
  const replicationFactor = wanted ?? Math.min(3, brokerCount);
  if (replicationFactor > brokerCount) throw new Error(`${REPLICATION_VAR}: ${replicationFactor} copies, but the cluster has ${brokerCount} broker(s)`);
  if (minInsync !== undefined && minInsync > replicationFactor) throw new Error(`${MIN_INSYNC_VAR}: ${minInsync} is more than the ${replicationFactor} copies of each topic`);
  return { replicationFactor, minInsyncReplicas: minInsync ?? Math.max(1, Math.min(2, replicationFactor - 1)) };
}

/** Existing topics with fewer copies than wanted (created before ADR 0356, or by hand): the operator raises them with a reassignment. */
async function underReplicated(admin, topics, replicationFactor) {
  if (replicationFactor < 2 || topics.length === 0) return [];
  const { topics: meta } = await admin.fetchTopicMetadata({ topics });
  return meta
    .map((t) => ({ name: t.name, copies: Math.min(...t.partitions.map((p) => p.replicas.length)) }))
    .filter((t) => t.copies < replicationFactor)
    .map((t) => `${t.name} (${t.copies})`);
}

async function run(args = []) {
  require('../args').parseVerbArgs('topics', args);
  const brokers = (process.env.MELD_KAFKA_BROKERS || (require('../lib').readStackEnv()).MELD_KAFKA_BROKERS || '').split(',').filter(Boolean);
  if (!brokers.length) throw new Error('MELD_KAFKA_BROKERS is not set and no local stack is running');
  const done = step(`kafka topics on ${brokers.join(',')}`);
  const { createKafkaClient, ensureTopics } = require(path.join(root, 'libs/kafka/dist'));
  const { allTopicNames } = require(path.join(root, 'libs/contracts/dist'));
  const kafka = createKafkaClient({ brokers, clientId: 'meld-topics', kafkaLogLevel: 'nothing' });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const { brokers: cluster } = await admin.describeCluster();
    const replication = topicReplication(process.env, cluster.length);
    const { created, existing } = await ensureTopics(brokers, allTopicNames(), { kafka, ...replication });
    const copies = replication.replicationFactor === -1 ? "the brokers' default copies" : `${replication.replicationFactor} copies, ${replication.minInsyncReplicas} in sync`;
    const thin = await underReplicated(admin, existing, replication.replicationFactor);
    const warning = thin.length ? `; fewer copies than ${replication.replicationFactor}: ${thin.join(', ')} (docs/deploy.md)` : '';
    done(`${created.length ? `created ${created.join(', ')} (${copies})` : 'all present'}${warning}`);
  } finally {
    await admin.disconnect();
  }
  return 0;
}

module.exports = { run, help, topicReplication };
