'use strict';
// `meld topics`: creates missing topics on a real Kafka cluster (compose, k8s Job).
// The development broker pre-creates them and does not implement CreateTopics.
const path = require('node:path');
const { root, step } = require('../lib');

const help = 'usage: meld topics\n  creates missing Kafka topics on a real cluster (MELD_KAFKA_BROKERS; the dev broker has them)';

async function run(args = []) {
  require('../args').parseVerbArgs('topics', args);
  const brokers = (process.env.MELD_KAFKA_BROKERS || (require('../lib').readStackEnv()).MELD_KAFKA_BROKERS || '').split(',').filter(Boolean);
  if (!brokers.length) throw new Error('MELD_KAFKA_BROKERS is not set and no local stack is running');
  const done = step(`kafka topics on ${brokers.join(',')}`);
  const { ensureTopics } = require(path.join(root, 'libs/kafka/dist'));
  const { allTopicNames } = require(path.join(root, 'libs/contracts/dist'));
  const created = await ensureTopics(brokers, allTopicNames());
  done(created && created.length ? `created ${created.join(', ')}` : 'all present');
  return 0;
}

module.exports = { run, help };
