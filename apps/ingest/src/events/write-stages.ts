import { metricsRegistry } from '@meld/platform';
import { Histogram } from 'prom-client';

/**
 * Time per stage of an event write, so a slow request can be placed: `open` (BEGIN, data
 * source, event types and lock-and-mark: batches without `_user_data`) or `context` (data
 * source and event types alone, no transaction: the others), `validate` (the items),
 * `transaction` (BEGIN with lock and mark, or unmark; produce; COMMIT; without the COMMIT
 * where it follows the answer) and `produce`
 * (the Kafka send and its acks, inside the transaction), `commit` (a COMMIT after the answer).
 * The ingest-events bench reads it for its half-peak tail.
 */
const stages = new Histogram({
  name: 'meld_ingest_event_write_stage_seconds',
  help: 'Duration of each stage of POST /stream/events',
  labelNames: ['stage'],
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
  registers: [metricsRegistry],
});

export type WriteStage = 'open' | 'context' | 'validate' | 'transaction' | 'produce' | 'commit';

/** Runs `work`, observing its duration (also when it throws) under `stage`. */
export async function timed<T>(stage: WriteStage, work: () => T | Promise<T>): Promise<T> {
  const end = stages.startTimer({ stage });
  try {
    return await work();
  } finally {
    end();
  }
}
