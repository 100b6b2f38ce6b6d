import type { WriteCommand } from '../../write/write.command';
import type { ParsedEvent } from '../event-item';
import type { EventWriteContext } from '../events.repository';

/** The Kafka send of the events a write admits, resolved once Kafka acked them. */
export type ProduceEvents = (events: ParsedEvent[]) => Promise<void>;

/**
 * One event write's dedup, whichever way its event ids are de-duplicated. The write
 * checks its items against `context`, then hands the ones that passed to `produceFresh`.
 */
export interface DedupWrite {
  /** Whether the path's data source is the project's, and the event types the batch names. */
  readonly context: EventWriteContext;
  /**
   * Rule 1 and the dedup: produces those of `candidates` whose contact lives in the data
   * source and whose `_event_id` was never accepted (each id once), their ids marked in the
   * write's transaction and the contacts locked until the events are on the topic; the marks
   * are committed (after the answer, or before it).
   */
  produceFresh(candidates: ParsedEvent[], produce: ProduceEvents): Promise<void>;
  /**
   * Rolls back whatever was not committed and frees the connection; always called, safe after
   * a commit. A write may hold its transaction from `open` to `release` only if nothing in
   * between takes another connection of the pool (no `_user_data` upsert): ADR 0227.
   */
  release(): Promise<void>;
}

/** A way to read the write's context and mark its ids: what each costs in round trips is in its file. */
export interface DedupStrategy {
  /** Null when the path's ids cannot name a data source of the project (not UUIDs). */
  open(command: WriteCommand, typeUids: string[]): Promise<DedupWrite | null>;
}
