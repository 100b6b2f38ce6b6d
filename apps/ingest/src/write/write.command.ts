import type { StreamCommand } from '../stream/stream.command';

/** A stream write: the tenant and data source of the path, the raw body, the reception time. */
export interface WriteCommand extends StreamCommand {
  body: unknown;
  /**
   * Reception time (ISO, UTC), by this process' clock: the events' `receivedAt` and default
   * `_event_date`. Not the time of contact writes: those are stamped under the row lock (ADR 0349).
   */
  receivedAt: string;
}
