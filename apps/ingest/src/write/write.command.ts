import type { StreamCommand } from '../stream/stream.command';

/** A stream write: the tenant and data source of the path, the raw body, the reception time. */
export interface WriteCommand extends StreamCommand {
  body: unknown;
  /** Reception time (ISO, UTC): the time of contact writes and the default `_event_date`. */
  receivedAt: string;
}
