import type { Kafka } from 'kafkajs';
import { FETCH_WAIT_MS, inspectCluster, isDevelopmentBroker } from './broker-kind';

/** A kafkajs client whose cluster is `clusterId` and holds `topics`. */
function cluster(clusterId: string, topics: string[] = []) {
  const asked = { listTopics: 0 };
  const admin = {
    connect: async () => undefined,
    disconnect: async () => undefined,
    describeCluster: async () => ({ brokers: [], controller: 1, clusterId }),
    listTopics: async () => {
      asked.listTopics++;
      return topics;
    },
  };
  return { kafka: { admin: () => admin } as unknown as Kafka, asked };
}

describe('inspectCluster', () => {
  it('recognises the development broker behind its long-poll proxy, long-polls there and skips the topic check', async () => {
    const { kafka, asked } = cluster('meldLongPoll15567e98a8a8');
    expect(await isDevelopmentBroker(kafka)).toBe(true);
    expect(await inspectCluster(kafka, ['meld.contacts.v1'])).toEqual({ development: true, missing: [], fetchWaitMs: 1_000 });
    expect(asked.listTopics).toBe(0);
  });

  it('waits only 100 ms on a bare mock cluster (a broker of an older build), which holds every empty fetch', async () => {
    const { kafka } = cluster('mockCluster15567e98a8a8');
    expect(await isDevelopmentBroker(kafka)).toBe(true);
    expect(await inspectCluster(kafka)).toEqual({ development: true, missing: [], fetchWaitMs: FETCH_WAIT_MS.bareMock });
  });

  it('long-polls on Kafka (any other cluster id) and names the topics it lacks', async () => {
    const { kafka } = cluster('MkU3OEVBNTcwNTJENDM2Qk', ['meld.contacts.v1']);
    expect(await isDevelopmentBroker(kafka)).toBe(false);
    expect(await inspectCluster(kafka, ['meld.contacts.v1', 'meld.contacts.v1.dlq', 'meld.contacts.v1.dlq'])).toEqual({
      development: false,
      missing: ['meld.contacts.v1.dlq'],
      fetchWaitMs: 1_000,
    });
  });
});
