import { Registry } from 'prom-client';
import { createProducer, type Producer } from '../src';
import { collect, freshTopic, testBrokers, uniqueId, waitFor } from './kafka-test-env';

// Against the real development broker (or real Kafka).
const brokers = testBrokers();

describe('producer against a real broker', () => {
  let producer: Producer;
  const metrics = new Registry();
  const readers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    producer = createProducer({ brokers, clientId: 'test-producer', metrics });
    await producer.connect();
  });

  afterEach(async () => {
    await Promise.all(readers.splice(0).map((stop) => stop()));
  });

  afterAll(async () => {
    await producer.disconnect();
  });

  it('sends concurrent calls together and keeps their order per key', async () => {
    const topic = await freshTopic(brokers, 'producer-order');
    const key = `k-${uniqueId()}`;
    // 60 calls at once: they queue behind the request in flight and go out grouped.
    await Promise.all(Array.from({ length: 60 }, (_, seq) => producer.send(topic, [{ key, value: { seq } }, { key: `${key}-other`, value: { seq } }])));
    const reader = await collect(brokers, topic);
    readers.push(reader.stop);
    await waitFor(() => reader.messages.length >= 120, 30_000, 'every message');
    const seqs = reader.messages.filter((m) => m.key?.toString() === key).map((m) => (JSON.parse(m.value!.toString()) as { seq: number }).seq);
    expect(seqs).toEqual([...Array(60).keys()]);
    const produced = await metrics.getSingleMetric('meld_kafka_messages_produced_total')?.get();
    expect(produced?.values.find((v) => v.labels.topic === topic)?.value).toBe(120);
  });
});
