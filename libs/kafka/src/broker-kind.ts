import type { Kafka } from 'kafkajs';

/** librdkafka's mock cluster, the development broker (tools/stack), names its cluster `mockCluster<hex>`. */
const DEVELOPMENT_CLUSTER_ID = /^mockCluster[0-9a-f]+$/;

/**
 * How long a fetch may wait for data (ADR 0216). Real Kafka answers a waiting fetch as soon as
 * a record arrives, so a long wait costs no latency and an idle consumer fetches once a second
 * per broker. The development broker holds every empty fetch for the full wait even when
 * records arrive meanwhile, so there the wait is the latency of the first message after idle.
 */
export const FETCH_WAIT_MS = { kafka: 1_000, development: 100 } as const;

export interface ClusterFacts {
  /** The brokers are the development broker (librdkafka's mock cluster). */
  development: boolean;
  /** Of the topics asked about, those the cluster lacks; not asked on the development broker. */
  missing: string[];
  /** The fetch wait for these brokers. */
  fetchWaitMs: number;
}

/**
 * What a consumer needs to know before it starts, in one admin round trip: which broker it
 * talks to and whether its topics exist (ADR 0218). The development broker is skipped: it is
 * started with every topic, and tests create throwaway ones on the fly.
 */
export async function inspectCluster(kafka: Kafka, topics: readonly string[] = []): Promise<ClusterFacts> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const { clusterId } = await admin.describeCluster();
    const development = DEVELOPMENT_CLUSTER_ID.test(clusterId);
    const fetchWaitMs = development ? FETCH_WAIT_MS.development : FETCH_WAIT_MS.kafka;
    if (development || topics.length === 0) return { development, missing: [], fetchWaitMs };
    const existing = new Set(await admin.listTopics());
    return { development, missing: [...new Set(topics)].filter((t) => !existing.has(t)), fetchWaitMs };
  } finally {
    await admin.disconnect();
  }
}

/** True when the brokers are the development broker (librdkafka's mock cluster). */
export async function isDevelopmentBroker(kafka: Kafka): Promise<boolean> {
  return (await inspectCluster(kafka)).development;
}
