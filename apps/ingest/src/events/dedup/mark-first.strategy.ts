import { errorSummary } from '@meld/contracts';
import type { OpenTransaction } from '@meld/db';
import { metricsRegistry } from '@meld/platform';
import { Logger } from '@nestjs/common';
import { Counter } from 'prom-client';
import type { WriteCommand } from '../../write/write.command';
import type { ParsedEvent } from '../event-item';
import type { EventWriteContext, EventsRepository, MarkedEvents } from '../events.repository';
import { timed } from '../write-stages';
import type { DedupStrategy, DedupWrite, ProduceEvents } from './dedup-write';

const commitFailures = new Counter({
  name: 'meld_ingest_event_mark_commit_failures_total',
  help: 'Event writes answered whose event-id marks did not commit (a resend of those ids is produced again)',
  registers: [metricsRegistry],
});
const log = new Logger('write-events');

/**
 * COMMITs the marks after the answer. The events are durable once Kafka acked them, and that
 * is what the 202 waits for; the marks only keep a later resend of the same ids off the topic.
 * Until the COMMIT they still do their job: a concurrent resend waits on the uncommitted ids,
 * and a delete of the contact on its FOR SHARE lock (its erase marker follows these events).
 * A failed COMMIT (Postgres down, ingest killed) loses the marks, which asyncCommit already
 * allows (EventsRepository.openAndMark): a resend is then on the topic twice, and every reader keeps
 * one copy per event id. What it buys: the COMMIT's round trip, a wait for a Postgres backend
 * to get a core on a busy box, leaves the request's latency.
 */
function commitAfterAnswer(tx: OpenTransaction<unknown>): void {
  void timed('commit', () => tx.commit()).catch((err: unknown) => {
    commitFailures.inc();
    log.error(`event-id marks not committed after the answer: ${errorSummary(err)}`);
  });
}

/**
 * Marks first, checks after: two round trips to Postgres (ADR 0083). BEGIN, the context and
 * the lock-and-mark of every item whose ids look valid go in one (EventsRepository.openAndMark);
 * then the caller's checks, and in the second the marks of items that failed are taken back
 * and the events produced; the COMMIT follows the answer (commitAfterAnswer). Only for a batch
 * whose live users do not depend on it (no `_user_data`). `open` throws ResentEventIds (nothing
 * held) when an id was accepted before or comes twice: that batch goes the check-first way.
 */
export class MarkFirst implements DedupStrategy {
  constructor(
    private readonly events: EventsRepository,
    private readonly marks: readonly { userId: string; eventId: string }[],
  ) {}

  async open(command: WriteCommand, typeUids: string[]): Promise<DedupWrite | null> {
    const opened = await timed('open', () => this.events.openAndMark(command.projectId, command.dataSourceId, typeUids, this.marks));
    return opened && new MarkedWrite(this.events, command, opened.tx, opened.context, opened.marked);
  }
}

/** Holds its transaction from `open` to `release`: nothing in between takes another connection (no `_user_data`). */
class MarkedWrite implements DedupWrite {
  constructor(
    private readonly events: EventsRepository,
    private readonly command: WriteCommand,
    private readonly tx: OpenTransaction<unknown>,
    readonly context: EventWriteContext,
    private readonly marked: MarkedEvents,
  ) {}

  async produceFresh(candidates: ParsedEvent[], produce: ProduceEvents): Promise<void> {
    const { live, fresh } = this.marked;
    const admitted = candidates.filter((e) => live.has(e.userId) && fresh.has(e.eventId));
    // Nothing to produce: release() rolls every mark back.
    if (admitted.length === 0) return;
    const valid = new Set(candidates.map((e) => e.eventId));
    const unmark = [...fresh].filter((id) => !valid.has(id));
    const { events, tx, command } = this;
    await timed('transaction', async () => {
      await events.unmark(tx.client, command.projectId, unmark);
      await produce(admitted);
    });
    commitAfterAnswer(tx);
  }

  release(): Promise<void> {
    return this.tx.release();
  }
}
