import { Counter, Gauge, Histogram, register as globalRegistry, type Registry } from 'prom-client';

/**
 * Prometheus metrics of the lib. Get-or-create against the registry so several runners
 * and producers in one process (or one Jest worker) share the series instead of
 * prom-client throwing "already registered".
 *
 * Counters are incremented once per batch with the batch's totals, not once per message:
 * a labelled inc() costs about a microsecond, which at 50k msg/s is a few percent of a core.
 */
export interface KafkaMetrics {
  processed: Counter<'topic' | 'group'>;
  failed: Counter<'topic' | 'group'>;
  deadLettered: Counter<'topic' | 'group' | 'reason'>;
  batchDuration: Histogram<'topic' | 'group'>;
  lag: Gauge<'topic' | 'group' | 'partition'>;
  /** Partition batches (or sink writers) waiting for their store to answer (ADR 0111). */
  storePaused: Gauge<'topic' | 'group'>;
  storePauses: Counter<'topic' | 'group'>;
  produced: Counter<'topic'>;
  produceDuration: Histogram<'topic'>;
}

function getOrCreate<T>(registry: Registry, name: string, create: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create();
}

const cache = new WeakMap<Registry, KafkaMetrics>();

export function kafkaMetrics(registry: Registry = globalRegistry): KafkaMetrics {
  const cached = cache.get(registry);
  if (cached) return cached;
  const registers = [registry];
  const metrics: KafkaMetrics = {
    processed: getOrCreate(registry, 'meld_kafka_messages_processed_total', () =>
      new Counter({ name: 'meld_kafka_messages_processed_total', help: 'Messages a handler processed successfully', labelNames: ['topic', 'group'], registers })),
    failed: getOrCreate(registry, 'meld_kafka_messages_failed_total', () =>
      new Counter({ name: 'meld_kafka_messages_failed_total', help: 'Handler attempts that failed (each retry counts)', labelNames: ['topic', 'group'], registers })),
    deadLettered: getOrCreate(registry, 'meld_kafka_messages_dead_lettered_total', () =>
      new Counter({ name: 'meld_kafka_messages_dead_lettered_total', help: 'Messages sent to the dead-letter topic', labelNames: ['topic', 'group', 'reason'], registers })),
    batchDuration: getOrCreate(registry, 'meld_kafka_batch_duration_seconds', () =>
      new Histogram({
        name: 'meld_kafka_batch_duration_seconds',
        help: 'Time to process one fetched batch of one partition',
        labelNames: ['topic', 'group'],
        buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
        registers,
      })),
    lag: getOrCreate(registry, 'meld_kafka_consumer_lag', () =>
      new Gauge({ name: 'meld_kafka_consumer_lag', help: 'Messages behind the high watermark after the last batch (per partition)', labelNames: ['topic', 'group', 'partition'], registers })),
    storePaused: getOrCreate(registry, 'meld_kafka_store_paused', () =>
      new Gauge({ name: 'meld_kafka_store_paused', help: 'Partition batches or sink writers paused because their store is unavailable', labelNames: ['topic', 'group'], registers })),
    storePauses: getOrCreate(registry, 'meld_kafka_store_pauses_total', () =>
      new Counter({ name: 'meld_kafka_store_pauses_total', help: 'Pauses for an unavailable store (transient errors are retried, never dead-lettered)', labelNames: ['topic', 'group'], registers })),
    produced: getOrCreate(registry, 'meld_kafka_messages_produced_total', () =>
      new Counter({ name: 'meld_kafka_messages_produced_total', help: 'Messages acknowledged by the brokers', labelNames: ['topic'], registers })),
    produceDuration: getOrCreate(registry, 'meld_kafka_produce_duration_seconds', () =>
      new Histogram({
        name: 'meld_kafka_produce_duration_seconds',
        help: 'Time from send() to broker acknowledgement (acks -1)',
        labelNames: ['topic'],
        buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
        registers,
      })),
  };
  cache.set(registry, metrics);
  return metrics;
}
