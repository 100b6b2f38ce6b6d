/** Consumer settings of the ClickHouse sinks; tests use groups of their own. */
export interface SinkOptions {
  eventsGroupId: string;
  audienceGroupId: string;
  fromBeginning: boolean;
  /**
   * Attempts before a message is dead-lettered. High: a failure here is a ClickHouse outage,
   * not a bad message (bad ones are dead-lettered at once by the schema check), and a dead
   * letter would lose the event for the audience.
   */
  maxAttempts: number;
  /** Rows per ClickHouse insert at most, and how long the first row of a flush waits for others. */
  maxRows: number;
  lingerMs: number;
  /**
   * Events sink (libs/kafka sink runner): rows per insert at most, and how long an idle writer
   * waits for more rows. Under load inserts grow by themselves (rows gather while the last
   * insert runs); the linger only bounds the parts a trickle creates (every insert is a part
   * ClickHouse must merge: with one insert of ~12 rows per partition batch, the events-sink
   * bench saw inserts average ~20 ms once a few thousand tiny parts had piled up). 250 ms, not
   * 50: at ingest-events' load the 50 ms inserts cost ClickHouse 12–18 µs per event, 250–500 ms
   * ones 3.4–3.8 (events are visible up to 0.2 s later; 500 ms let the backlog reach 53k events,
   * close to what the dev broker keeps over 8 partitions).
   */
  eventsMaxRows: number;
  eventsLingerMs: number;
}

export const SINK_OPTIONS = Symbol('SINK_OPTIONS');

/** `MELD_PROBES_EVENTS_GROUP` (default `probes-events`), `MELD_PROBES_AUDIENCE_GROUP` (default `probes-audience`). */
export function sinkOptions(env: NodeJS.ProcessEnv = process.env): SinkOptions {
  return {
    eventsGroupId: env.MELD_PROBES_EVENTS_GROUP || 'probes-events',
    audienceGroupId: env.MELD_PROBES_AUDIENCE_GROUP || 'probes-audience',
    fromBeginning: true,
    maxAttempts: 1000,
    maxRows: 5000,
    lingerMs: 2,
    eventsMaxRows: 10_000,
    eventsLingerMs: 250,
  };
}
