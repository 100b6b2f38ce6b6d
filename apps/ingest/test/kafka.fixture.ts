import { randomUUID } from 'node:crypto';
import { testEnv, waitFor } from '@meld/testing';
import { Kafka, logLevel } from 'kafkajs';
import type { Json } from '@meld/fixtures';

export interface Collected {
  key: string | null;
  value: Json;
}

/**
 * Reads a topic from the beginning with a group of its own and keeps the messages `keep`
 * accepts (tests filter on their own project id, so runs and suites do not see each other).
 */
export async function collectTopic(topic: string, keep: (value: Json) => boolean) {
  const kafka = new Kafka({ brokers: testEnv().kafkaBrokers, clientId: 'ingest-test', logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `ingest-test-${randomUUID()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const messages: Collected[] = [];
  await consumer.run({
    eachMessage: async ({ message }) => {
      const value = JSON.parse(message.value?.toString() ?? 'null');
      if (keep(value)) messages.push({ key: message.key?.toString() ?? null, value });
    },
  });
  return {
    messages,
    /** Waits until `count` messages matched `where` (all kept ones by default). */
    async waitFor(count: number, where: (m: Collected) => boolean = () => true, timeoutMs = 20000) {
      return waitFor(`${count} message(s) on ${topic}`, async () => {
        const found = messages.filter(where);
        return found.length >= count ? found : null;
      }, { timeoutMs });
    },
    stop: () => consumer.disconnect(),
  };
}
