import { errorSummary } from '@meld/contracts';
import type { Admin, Kafka } from 'kafkajs';
import { createKafkaClient, type KafkaConnectionOptions } from './client';
import { silentLogger, type Logger } from './logger';

export interface EnsureTopicsOptions {
  /** Partitions of a topic this call creates. Default 8 (topics.json). */
  numPartitions?: number;
  /** Default -1: the broker's default.replication.factor. */
  replicationFactor?: number;
  /** `min.insync.replicas` of a topic this call creates; default: the broker's. */
  minInsyncReplicas?: number;
  /**
   * When CreateTopics is refused, ask for the missing topics' metadata with auto-creation
   * allowed (the development broker, like a default Apache Kafka, creates them then). For
   * tests and benchmarks with throwaway topics only: such topics get the broker's default
   * partition count. Apps leave it off so a missing topic fails startup loudly.
   */
  autoCreateFallback?: boolean;
  logger?: Logger;
  clientId?: string;
  /** An existing kafkajs client; otherwise one is created from the brokers. */
  kafka?: Kafka;
}

export interface EnsureTopicsResult {
  existing: string[];
  created: string[];
}

/**
 * Makes sure the topics exist. Reads the cluster's topic list first and only calls
 * CreateTopics for the missing ones, so the development broker (librdkafka's mock cluster:
 * topics pre-created, CreateTopics unsupported) passes whenever its topics are there, and
 * real Kafka gets what it lacks. Fails naming the topics that are still missing.
 */
export async function ensureTopics(
  brokers: KafkaConnectionOptions['brokers'],
  names: readonly string[],
  options: EnsureTopicsOptions = {},
): Promise<EnsureTopicsResult> {
  const logger = options.logger ?? silentLogger;
  const kafka = options.kafka ?? createKafkaClient({ brokers, clientId: options.clientId ?? 'meld-topics', logger, kafkaLogLevel: 'nothing' });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const wanted = [...new Set(names)];
    const before = new Set(await admin.listTopics());
    const missing = wanted.filter((t) => !before.has(t));
    const existing = wanted.filter((t) => before.has(t));
    if (missing.length === 0) return { existing, created: [] };

    let createError: unknown;
    try {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((topic) => ({
          topic,
          numPartitions: options.numPartitions ?? 8,
          replicationFactor: options.replicationFactor ?? -1,
          configEntries: options.minInsyncReplicas === undefined ? undefined : [{ name: 'min.insync.replicas', value: String(options.minInsyncReplicas) }],
        })),
      });
    } catch (err) {
      createError = err;
      logger.warn({ err: errorSummary(err), missing }, 'CreateTopics failed');
      if (options.autoCreateFallback) await autoCreateViaMetadata(admin, missing);
    }

    // After a failed CreateTopics without the fallback nothing will create them: look once.
    const still = await waitForTopics(admin, missing, createError && !options.autoCreateFallback ? 0 : 10_000);
    if (still.length > 0) {
      const why = createError ? `; CreateTopics failed: ${(createError as Error).message}` : '';
      throw new Error(`Kafka topics missing: ${still.join(', ')}${why}`);
    }
    logger.info({ created: missing }, 'kafka topics created');
    return { existing, created: missing };
  } finally {
    await admin.disconnect();
  }
}

/** The topics of `names` the cluster does not have; creates nothing (an app's init container waits on it, ADR 0171). */
export async function missingTopics(brokers: KafkaConnectionOptions['brokers'], names: readonly string[], options: Pick<EnsureTopicsOptions, 'logger' | 'clientId'> = {}): Promise<string[]> {
  const kafka = createKafkaClient({ brokers, clientId: options.clientId ?? 'meld-await-schema', logger: options.logger ?? silentLogger, kafkaLogLevel: 'nothing' });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const present = new Set(await admin.listTopics());
    return [...new Set(names)].filter((t) => !present.has(t));
  } finally {
    await admin.disconnect();
  }
}

/** A Metadata request naming a topic creates it where the broker allows auto-creation. */
async function autoCreateViaMetadata(admin: Admin, topics: string[]): Promise<void> {
  try {
    await admin.fetchTopicMetadata({ topics });
  } catch {
    // Leaders may not be elected yet; waitForTopics below decides.
  }
}

async function waitForTopics(admin: Admin, topics: string[], timeoutMs: number): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const present = new Set(await admin.listTopics());
    const still = topics.filter((t) => !present.has(t));
    if (still.length === 0 || Date.now() >= deadline) return still;
    await new Promise((r) => setTimeout(r, 200));
  }
}
