import type { Kafka } from 'kafkajs';
import { Registry } from 'prom-client';
import { z } from 'zod';
import { topicHandler } from './batch-processor';
import { createConsumerRunner } from './consumer-runner';
import type { Producer } from './producer';

/** A Kafka cluster (not the development broker) that has only `topics`; consumers must not be created. */
function kafkaWith(topics: string[]): Kafka {
  const admin = {
    connect: async () => undefined,
    disconnect: async () => undefined,
    describeCluster: async () => ({ brokers: [], controller: 1, clusterId: 'MkU3OEVBNTcwNTJENDM2Qk' }),
    listTopics: async () => topics,
  };
  return {
    admin: () => admin,
    consumer: () => {
      throw new Error('no consumer expected');
    },
  } as unknown as Kafka;
}

const producer: Producer = {
  connect: async () => undefined,
  send: async () => undefined,
  publish: async () => undefined,
  sendRaw: async () => undefined,
  disconnect: async () => undefined,
};

describe('consumer runner start-up check (ADR 0218)', () => {
  it('refuses to start on Kafka when a subscribed topic or its dead-letter topic is missing, naming them', async () => {
    const runner = createConsumerRunner({
      kafka: kafkaWith(['meld.things.v1']),
      brokers: 'unused:9092',
      clientId: 'spec',
      groupId: 'spec',
      producer,
      metrics: new Registry(),
      handlers: [topicHandler({ topic: 'meld.things.v1', schema: z.unknown(), handle: () => undefined })],
    });
    await expect(runner.start()).rejects.toThrow('Kafka topics missing: meld.things.v1.dlq');
    await runner.stop();
    expect(runner.isHealthy()).toBe(false);
  });
});
