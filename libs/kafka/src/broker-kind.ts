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

/** True when the brokers are the development broker (librdkafka's mock cluster). */
export async function isDevelopmentBroker(kafka: Kafka): Promise<boolean> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const { clusterId } = await admin.describeCluster();
    return DEVELOPMENT_CLUSTER_ID.test(clusterId);
  } finally {
    await admin.disconnect();
  }
}

/** The fetch wait for these brokers: FETCH_WAIT_MS.development on the development broker, else FETCH_WAIT_MS.kafka. */
export async function fetchWaitFor(kafka: Kafka): Promise<number> {
  return (await isDevelopmentBroker(kafka)) ? FETCH_WAIT_MS.development : FETCH_WAIT_MS.kafka;
}
