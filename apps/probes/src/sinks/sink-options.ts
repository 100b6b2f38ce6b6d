import { loadConfig, sessionTimeoutFromEnv } from '@meld/platform';
import { z } from 'zod';

/** Consumer settings of the ClickHouse sinks; tests use groups of their own. */
export interface SinkOptions {
  eventsGroupId: string;
  audienceGroupId: string;
  fromBeginning: boolean;
  /** `MELD_KAFKA_SESSION_TIMEOUT_MS`: how long a killed sink holds its partitions (kafkajs default 30 s). */
  sessionTimeoutMs?: number;
  /**
   * Attempts before a message is dead-lettered. High: a failure here is a ClickHouse outage,
   * not a bad message (bad ones are dead-lettered at once by the schema check), and a dead
   * letter would lose the event for the audience.
   */
  maxAttempts: number;
  /**
   * Audience sink (libs/kafka sink runner, ADR 0339): messages per write at most, and how long an
   * idle writer waits for more. A write is three inserts (three parts to merge) and a read-back of
   * the snapshot's stored states, whatever its size. Draining a 50,000-snapshot backlog, writes of
   * at most 2,000 / 5,000 / 10,000 gave 2,843 / 3,571-4,231 / 3,441-3,962 snapshots/s: 5,000
   * (10 read-back queries of 500) is as fast as 10,000 with half the rows held and retried at
   * once. At a steady 500 snapshots/s in sends of 20, lingering 2 / 250 / 1,000 ms cost ClickHouse
   * 2,274 / 1,283 / 685 µs and probes 525 / 417 / 363 µs per snapshot, the last one visible 0.27 /
   * 0.39 / 0.71 s after its send: 1,000 ms, as the events sink (ADR 0088), ClickHouse's
   * one insert per second per table.
   */
  audienceMaxRows: number;
  audienceLingerMs: number;
  /**
   * Events sink (libs/kafka sink runner): rows per insert at most, and how long an idle writer
   * waits for more rows. Under load inserts grow by themselves (rows gather while the last
   * insert runs); the linger only bounds the parts a trickle creates. Every insert is a part
   * ClickHouse writes and merges, a fixed cost whatever its size: ClickHouse's own guidance is
   * about one insert per second per table. 1000 ms, not 250: at 12,000 events/s (ingest-events'
   * latency phase) ClickHouse cost 4.2-5.3 µs per event with 1 s inserts against 13.0-13.5 with
   * 250 ms ones, and the gateway's p99 in the same interleaved runs was 47.7-53.6 ms against
   * 106.9-114.7 (ADR 0088). Earlier, 50 ms inserts had cost 12-18 µs per
   * event at peak and 250-500 ms ones 3.4-3.8. Events reach ClickHouse up to ~1 s after their
   * 202 ("within seconds", as the audience view); `MELD_PROBES_EVENTS_LINGER_MS` sets it.
   */
  eventsMaxRows: number;
  eventsLingerMs: number;
}

export const SINK_OPTIONS = Symbol('SINK_OPTIONS');

const linger = z.object({ MELD_PROBES_EVENTS_LINGER_MS: z.coerce.number().int().min(0).max(60_000).default(1000) });

/**
 * `MELD_PROBES_EVENTS_GROUP` (default `probes-events`), `MELD_PROBES_AUDIENCE_GROUP` (default
 * `probes-audience`), `MELD_PROBES_EVENTS_LINGER_MS` (default 1000), `MELD_KAFKA_SESSION_TIMEOUT_MS`.
 */
export function sinkOptions(env: NodeJS.ProcessEnv = process.env): SinkOptions {
  return {
    eventsGroupId: env.MELD_PROBES_EVENTS_GROUP || 'probes-events',
    audienceGroupId: env.MELD_PROBES_AUDIENCE_GROUP || 'probes-audience',
    fromBeginning: true,
    sessionTimeoutMs: sessionTimeoutFromEnv(env),
    maxAttempts: 1000,
    audienceMaxRows: 5000,
    audienceLingerMs: 1000,
    eventsMaxRows: 10_000,
    eventsLingerMs: loadConfig(linger, env).MELD_PROBES_EVENTS_LINGER_MS,
  };
}
