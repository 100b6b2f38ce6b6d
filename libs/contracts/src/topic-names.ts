/**
 * Kafka topic names, typed, read from topics.json.
 *
 * topics.json stays the one list of topics because non-TypeScript code reads it too (the
 * development broker is started with every topic in it, tools/stack/kafka.js; on real Kafka
 * `meld topics` and the k8s `topics` Job create them). This file only gives each name a typed alias; it never
 * spells a topic name itself, so the two cannot drift: loading fails if topics.json
 * gains a topic that has no alias here, or loses one that has.
 *
 * Message schemas live elsewhere in contracts; keep this file to names.
 */
import topicsFile from './topics.json';

interface TopicEntry {
  name: string;
  key: string;
  dlq?: boolean;
}

interface TopicsFile {
  partitions: number;
  topics: TopicEntry[];
}

/** A topic name from topics.json (or its dead-letter topic). Branded so a typo'd string is not one. */
export type TopicName = string & { readonly __topic: unique symbol };

/** Aliases of the topics; `meld.automation-triggers.v1` → `automationTriggers`. */
export type TopicAlias = 'contacts' | 'events' | 'audience' | 'automationTriggers' | 'smsStatus';

const ALIASES: readonly TopicAlias[] = ['contacts', 'events', 'audience', 'automationTriggers', 'smsStatus'];

/** Suffix of a topic's dead-letter topic (system design §1: `<topic>.dlq`). */
export const DLQ_SUFFIX = '.dlq';

const file = topicsFile as TopicsFile;

/** `meld.<kebab-name>.v<n>` → camelCase alias of `<kebab-name>`. */
export function topicAlias(name: string): string {
  const match = /^meld\.([a-z0-9-]+)\.v\d+$/.exec(name);
  if (!match) throw new Error(`topics.json: "${name}" does not follow meld.<name>.v<version>`);
  return match[1].replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function buildTopics(): Readonly<Record<TopicAlias, TopicName>> {
  const out: Partial<Record<TopicAlias, TopicName>> = {};
  for (const entry of file.topics) {
    const alias = topicAlias(entry.name);
    if (!(ALIASES as readonly string[]).includes(alias)) {
      throw new Error(`topics.json has "${entry.name}" but contracts/topic-names.ts has no alias "${alias}" for it`);
    }
    out[alias as TopicAlias] = entry.name as TopicName;
  }
  const missing = ALIASES.filter((a) => !out[a]);
  if (missing.length) throw new Error(`contracts/topic-names.ts aliases ${missing.join(', ')} have no topic in topics.json`);
  return Object.freeze(out as Record<TopicAlias, TopicName>);
}

/** Typed topic names: `Topics.contacts === 'meld.contacts.v1'`. */
export const Topics = buildTopics();

/** Partitions every topic gets (the broker and the topic bootstrap read the same number). */
export const TOPIC_PARTITIONS: number = file.partitions;

const byName = new Map(file.topics.map((t) => [t.name, t]));

/** Whether the topic has a dead-letter topic (topics.json `dlq: true`). */
export function hasDlq(name: string): boolean {
  return byName.get(name)?.dlq === true;
}

/**
 * The dead-letter topic of a topic. Throws for a known topic declared without one, so a
 * consumer cannot dead-letter into a topic nobody created.
 */
export function dlqTopic(name: string): TopicName {
  const entry = byName.get(name);
  if (entry && entry.dlq !== true) throw new Error(`topic ${name} has no dead-letter topic (topics.json dlq is not true)`);
  return `${name}${DLQ_SUFFIX}` as TopicName;
}

/** Every topic name including the dead-letter topics: what the broker must have. */
export function allTopicNames(): TopicName[] {
  return file.topics.flatMap((t) => (t.dlq ? [t.name, `${t.name}${DLQ_SUFFIX}`] : [t.name])) as TopicName[];
}

/** The documented key of a topic's messages (`project/datasource/userId`, …). */
export function topicKeyDescription(name: string): string | undefined {
  return byName.get(name)?.key;
}
