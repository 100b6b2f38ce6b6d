import { type ClickHouse, type EventRow, join, sql, toEventRow } from '@meld/clickhouse';
import { Topics, eventsMessage, isEventsErased, type EventsErased, type EventsMessage } from '@meld/contracts';
import { createSinkRunner, sinkHandler, type ConsumerRunner, type SinkHandler, type SinkRunnerOptions } from '@meld/kafka';
import type { SinkOptions } from './sink-options';

/** What one `meld.events.v1` message asks of ClickHouse: store an event, or forget a deleted contact's events. */
export type EventsSinkRow = { event: EventRow } | { erase: EventsErased };

/**
 * `meld.events.v1` → ClickHouse `events`. Order does not matter for events (ReplacingMergeTree:
 * a redelivered or reordered event is the same row), so they go through the libs/kafka sink
 * runner: fetching continues while one insert stores everything taken since the last one, and
 * offsets are committed after the write.
 *
 * An erase marker (the contact was deleted, docs/design-data-path.md "Delete") is the one
 * ordered thing: ingest queues it after every event of the contact it acknowledged, on the
 * contact's key. So `write` keeps the taken order: the events before a marker are inserted,
 * then a mutation deletes the contact's rows (markers in a row share mutations, as many as their
 * keys need to fit a query: eraseChunks; a mutation leaves rows inserted after it alone,
 * so events of a contact re-created later survive), then the rest. A retried or redelivered
 * write replays the same sequence, so it is idempotent as the runner requires.
 */
export function eventsSink(ch: ClickHouse): SinkHandler<EventsMessage, EventsSinkRow> {
  return sinkHandler({
    topic: Topics.events,
    schema: eventsMessage,
    toRow: (m) => (isEventsErased(m) ? { erase: m } : { event: toEventRow(m) }),
    write: (rows) => writeInOrder(ch, rows),
  });
}

/**
 * Bytes of contact keys one erase mutation holds: its query stays under ClickHouse's 256 KiB
 * max_query_size (a longer one is refused, and the write would fail on every retry) with room for
 * quoting, which at worst doubles a key.
 */
const ERASE_QUERY_KEY_BYTES = 100_000;

/** The erase markers cut into runs whose keys fit one mutation's query, in their order. */
function eraseChunks(erases: readonly EventsErased[]): EventsErased[][] {
  const chunks: EventsErased[][] = [];
  let chunk: EventsErased[] = [];
  let bytes = 0;
  for (const e of erases) {
    const size = Buffer.byteLength(e.projectId) + Buffer.byteLength(e.dataSourceId) + Buffer.byteLength(e.userId);
    if (chunk.length && bytes + size > ERASE_QUERY_KEY_BYTES) {
      chunks.push(chunk);
      chunk = [];
      bytes = 0;
    }
    chunk.push(e);
    bytes += size;
  }
  if (chunk.length) chunks.push(chunk);
  return chunks;
}

async function writeInOrder(ch: ClickHouse, rows: EventsSinkRow[]): Promise<void> {
  let events: EventRow[] = [];
  let erases: EventsErased[] = [];
  const flushErases = async () => {
    for (const chunk of eraseChunks(erases)) {
      const contacts = chunk.map((e) => sql`(${e.projectId}, ${e.dataSourceId}, ${e.userId})`);
      await ch.command(sql`ALTER TABLE events DELETE WHERE (project_id, data_source_id, user_id) IN (${join(contacts, ', ')})`);
    }
    erases = [];
  };
  for (const row of rows) {
    if ('event' in row) {
      await flushErases();
      events.push(row.event);
    } else {
      if (events.length) await ch.insert('events', events);
      events = [];
      erases.push(row.erase);
    }
  }
  await flushErases();
  if (events.length) await ch.insert('events', events);
}

/** The events consumer; `common` is what every probes consumer shares (client, logger, retries, group). */
export function createEventsSinkRunner(common: Omit<SinkRunnerOptions, 'sink'>, ch: ClickHouse, options: SinkOptions): ConsumerRunner {
  return createSinkRunner({ ...common, sink: eventsSink(ch), maxRows: options.eventsMaxRows, lingerMs: options.eventsLingerMs });
}
