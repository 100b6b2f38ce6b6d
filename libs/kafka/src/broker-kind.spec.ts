import type { Kafka } from 'kafkajs';
import { FETCH_WAIT_MS, fetchWaitFor, isDevelopmentBroker } from './broker-kind';

/** A kafkajs client whose cluster answers DescribeCluster with `clusterId`. */
function clusterNamed(clusterId: string): Kafka {
  const admin = {
    connect: async () => undefined,
    disconnect: async () => undefined,
    describeCluster: async () => ({ brokers: [], controller: 1, clusterId }),
  };
  return { admin: () => admin } as unknown as Kafka;
}

describe('broker kind', () => {
  it('recognises the development broker by the mock cluster id and waits 100 ms there', async () => {
    expect(await isDevelopmentBroker(clusterNamed('mockCluster15567e98a8a8'))).toBe(true);
    expect(await fetchWaitFor(clusterNamed('mockCluster15567e98a8a8'))).toBe(FETCH_WAIT_MS.development);
  });

  it('long-polls on Kafka (any other cluster id), which answers a waiting fetch when data arrives', async () => {
    expect(await isDevelopmentBroker(clusterNamed('MkU3OEVBNTcwNTJENDM2Qk'))).toBe(false);
    expect(await fetchWaitFor(clusterNamed('MkU3OEVBNTcwNTJENDM2Qk'))).toBe(1_000);
  });
});
