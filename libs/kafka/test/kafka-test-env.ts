import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type KafkaMessage } from 'kafkajs';
import { createProducer, ensureTopics, type ConsumerRunner, type Logger, type Producer } from '../src';

/**
 * The broker of the integration tests: MELD_KAFKA_BROKERS (exported by `meld test`), else
 * the running local stack's `.stack/kafka.brokers`. No broker is an error, not a skip: a
 * green run must mean the tests ran.
 */
export function testBrokers(): string[] {
  const fromEnv = process.env.MELD_KAFKA_BROKERS;
  if (fromEnv) return fromEnv.split(',');
  const file = join(__dirname, '../../../.stack/kafka.brokers');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim().split(',');
  throw new Error('MELD_KAFKA_BROKERS is not set and .stack/kafka.brokers does not exist: run the tests through `npm test` (it starts the local stack)');
}

export const uniqueId = (): string => randomUUID().slice(0, 8);

/**
 * A fresh topic (and its .dlq) per test, so tests never see each other's messages. The
 * development broker auto-creates topics on a metadata request (checked: it refuses
 * CreateTopics but creates on Metadata), real Kafka gets CreateTopics.
 */
export async function freshTopic(brokers: string[], prefix: string): Promise<string> {
  const topic = `test.${prefix}.${uniqueId()}`;
  await ensureTopics(brokers, [topic, `${topic}.dlq`], { autoCreateFallback: true, numPartitions: 4 });
  return topic;
}

/** Polls a condition instead of sleeping a guessed time. */
export async function waitFor(condition: () => boolean, timeoutMs = 30_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Reads a topic from the beginning with plain kafkajs (to look at dead letters from the outside). */
export async function collect(brokers: string[], topic: string): Promise<{ messages: KafkaMessage[]; stop: () => Promise<void> }> {
  const kafka = new Kafka({ brokers, clientId: 'test-reader', logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `test-reader-${uniqueId()}`, maxWaitTimeInMs: 100 });
  const messages: KafkaMessage[] = [];
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => void messages.push(message) });
  return { messages, stop: () => consumer.disconnect() };
}

/** A raw producer for bytes the lib's producer would refuse to write (invalid JSON). */
export async function rawSend(brokers: string[], topic: string, messages: Array<{ key: string; value: string }>): Promise<void> {
  const kafka = new Kafka({ brokers, clientId: 'test-raw', logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, acks: -1, messages });
  await producer.disconnect();
}

/**
 * Jest hooks for a file of runner tests (call inside `describe`): one producer for the file,
 * and the runners and readers a test pushes, stopped after each test.
 */
export function runnerTestHooks(brokers: string[]): { producer: Pick<Producer, 'send'>; runners: ConsumerRunner[]; readers: Array<() => Promise<void>> } {
  let producer: Producer | undefined;
  const runners: ConsumerRunner[] = [];
  const readers: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    producer = createProducer({ brokers, clientId: 'test-producer' });
    await producer.connect();
  });
  afterEach(async () => {
    await Promise.all(runners.splice(0).map((r) => r.stop()));
    await Promise.all(readers.splice(0).map((stop) => stop()));
  });
  afterAll(async () => {
    await producer?.disconnect();
  });
  return { producer: { send: (topic, messages, options) => producer!.send(topic, messages, options) }, runners, readers };
}

/** A logger keeping each line as `level msg {fields}`, for tests of what reaches a line (ADR 0338). */
export function captureLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const capture = (level: string) => (obj: object, msg?: string) => void lines.push(`${level} ${msg ?? ''} ${JSON.stringify(obj)}`);
  return { lines, logger: { debug: capture('debug'), info: capture('info'), warn: capture('warn'), error: capture('error') } };
}
