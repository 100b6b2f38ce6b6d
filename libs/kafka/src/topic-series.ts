import type { DeadLetterReason } from './headers';
import type { KafkaMetrics } from './metrics';

type Series = ReturnType<typeof seriesFor>;

function seriesFor(metrics: KafkaMetrics, topic: string, group: string) {
  const labels = { topic, group };
  const lag = new Map<number, ReturnType<typeof metrics.lag.labels>>();
  const deadLettered = new Map<string, ReturnType<typeof metrics.deadLettered.labels>>();
  return {
    processed: metrics.processed.labels(labels),
    failed: metrics.failed.labels(labels),
    batchDuration: metrics.batchDuration.labels(labels),
    /** A pause for the store started (true) or ended (false). */
    storePaused(paused: boolean): void {
      const gauge = metrics.storePaused.labels(labels);
      if (paused) {
        gauge.inc();
        metrics.storePauses.labels(labels).inc();
      } else gauge.dec();
    },
    countDeadLetters(counts: Record<DeadLetterReason, number>): void {
      for (const [reason, count] of Object.entries(counts)) {
        if (!count) continue;
        let c = deadLettered.get(reason);
        if (!c) deadLettered.set(reason, (c = metrics.deadLettered.labels({ ...labels, reason })));
        c.inc(count);
      }
    },
    /** offsetLag() is arithmetic on the batch's high watermark: no request, so it is cheap enough per batch. */
    setLag(partition: number, offsetLag: string): void {
      let g = lag.get(partition);
      if (!g) lag.set(partition, (g = metrics.lag.labels({ ...labels, partition: String(partition) })));
      g.set(Number(offsetLag));
    },
  };
}

/**
 * Labelled children resolved once per topic: prom-client hashes the label object on every
 * labelled call, which per batch adds up at tens of thousands of messages per second.
 */
export class TopicSeries {
  private readonly byTopic = new Map<string, Series>();

  constructor(
    private readonly metrics: KafkaMetrics,
    private readonly group: string,
  ) {}

  of(topic: string): Series {
    let s = this.byTopic.get(topic);
    if (!s) this.byTopic.set(topic, (s = seriesFor(this.metrics, topic, this.group)));
    return s;
  }
}
