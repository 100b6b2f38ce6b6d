import type { Kafka } from 'kafkajs';

/**
 * The development broker (tools/stack) is librdkafka's mock cluster, `mockCluster<hex>`. Behind
 * its long-poll proxy (ADR 0260) it reports `meldLongPoll<hex>`; a broker started from an older
 * build, still running, reports the mock's own id.
 */
const DEVELOPMENT_CLUSTER_ID = /^(mockCluster|meldLongPoll)[0-9a-f]+$/;
const LONG_POLL_CLUSTER_ID = /^meldLongPoll/;

/**
 * How long a fetch may wait for data (ADRs 0216, 0260). Kafka answers a waiting fetch as soon
 * as a record arrives, and so does the development broker's long-poll proxy: a long wait costs
 * no latency and an idle consumer fetches once a second per broker. The bare mock holds every
 * empty fetch for the full wait even when records arrive meanwhile, so there the wait is the
 * latency of the first message after idle.
 */
export const FETCH_WAIT_MS = { kafka: 1_000, development: 1_000, bareMock: 100 } as const;

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
    const fetchWaitMs = !development ? FETCH_WAIT_MS.kafka : LONG_POLL_CLUSTER_ID.test(clusterId) ? FETCH_WAIT_MS.development : FETCH_WAIT_MS.bareMock;
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
