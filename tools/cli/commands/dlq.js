'use strict';
// `meld dlq list <topic> [--json] [--all] [--limit N]` and `meld dlq replay <topic>` (ADR 0112):
// inspect and re-drive the dead letters of a topic (`meld.contacts.v1` or `meld.contacts.v1.dlq`)
// on the cluster in MELD_KAFKA_BROKERS, or the local stack's broker. Values are never printed.
const path = require('node:path');
const { root } = require('../lib');
const { UsageError, parseVerbArgs } = require('../args');

const USAGE = 'usage: meld dlq list <topic> [--json] [--all] [--limit N] | meld dlq replay <topic>';

function brokers() {
  const list = (process.env.MELD_KAFKA_BROKERS || require('../lib').readStackEnv().MELD_KAFKA_BROKERS || '').split(',').filter(Boolean);
  if (!list.length) throw new Error('MELD_KAFKA_BROKERS is not set and no local stack is running');
  return list;
}

const help = [
  USAGE,
  '  list: the dead letters of <topic> (or <topic>.dlq) with error, key, offsets and time; values are never printed',
  '  replay: re-produces them to their source topic and records what it sent, so a second replay repeats nothing',
].join('\n');

function parse(args) {
  const { values, positionals } = parseVerbArgs('dlq', args, {
    options: { json: { type: 'boolean', default: false }, all: { type: 'boolean', default: false }, limit: { type: 'string' } },
    positionals: true,
  });
  const [verb, topic, extra] = positionals;
  if (!['list', 'replay'].includes(verb) || !topic || extra !== undefined) throw new UsageError(`meld dlq: ${!['list', 'replay'].includes(verb) ? 'the action is list or replay' : !topic ? 'missing topic' : `unexpected argument "${extra}"`}`);
  if (values.limit !== undefined && !/^[1-9]\d*$/.test(values.limit)) throw new UsageError(`meld dlq: --limit must be a whole number ≥ 1 (got "${values.limit}")`);
  return { verb, topic, json: values.json, all: values.all, limit: values.limit === undefined ? undefined : Number(values.limit) };
}

function table(entries) {
  const rows = entries.map((e) => [`${e.partition}:${e.offset}`, e.time, e.key ?? '', e.reason ?? '', `${e.sourceTopic}[${e.sourcePartition ?? '?'}]@${e.sourceOffset ?? '?'}`, (e.error ?? '').replace(/\s+/g, ' ').slice(0, 160)]);
  const head = ['partition:offset', 'dead-lettered at', 'key', 'reason', 'from', 'error'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ');
  return [line(head), ...rows.map(line)].join('\n');
}

async function run(args) {
  const options = parse(args);
  const kafka = require(path.join(root, 'libs/kafka/dist'));
  const common = { brokers: brokers(), clientId: 'meld-cli', topic: options.topic };
  const dlqTopic = kafka.deadLetterTopicOf(options.topic);
  if (options.verb === 'list') {
    const entries = await kafka.listDeadLetters({ ...common, all: options.all, limit: options.limit });
    if (options.json) console.log(JSON.stringify(entries, null, 2));
    else if (entries.length === 0) console.log(`${dlqTopic}: no dead letters${options.all ? '' : ' waiting (--all shows those already replayed)'}`);
    else console.log(table(entries));
    return 0;
  }
  const result = await kafka.replayDeadLetters({
    ...common,
    onProgress: ({ replayed, total }) => process.stderr.write(`\r${dlqTopic}: replayed ${replayed}/${total}`),
  });
  process.stderr.write('\n');
  console.log(result.total === 0 ? `${dlqTopic}: nothing to replay` : `${dlqTopic}: replayed ${result.replayed} to their source topic`);
  return 0;
}

module.exports = { run, parse, help };
