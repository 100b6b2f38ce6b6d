import type { WriteCommand } from '../../write/write.command';
import type { ParsedEvent } from '../event-item';
import { type EventWriteContext, type EventsRepository, ResentEventIds } from '../events.repository';
import { timed } from '../write-stages';
import type { DedupStrategy, DedupWrite, ProduceEvents } from './dedup-write';

/**
 * Checks first, marks after: three round trips to Postgres. The context alone, on a pooled
 * connection given back at once; the caller's checks and `_user_data` upserts (which may
 * create the contacts that make events live, in a transaction of their own); then BEGIN with
 * the lock-and-mark, produce and COMMIT before the answer. Nothing is held between `open`
 * and `produceFresh`: a write that held its transaction while the upsert took a second
 * connection of the same pool stalled once as many writes as the pool has connections came
 * together, each holding one and waiting for another until the acquire timeout (ADR 0227).
 * `resent`: the batch holds an id accepted before, so the marks skip existing ids (ON
 * CONFLICT) instead of failing on them; a write that did not know it and meets one goes
 * again that way.
 */
export class CheckFirst implements DedupStrategy {
  constructor(
    private readonly events: EventsRepository,
    private readonly o: { resent: boolean },
  ) {}

  async open(command: WriteCommand, typeUids: string[]): Promise<DedupWrite | null> {
    const context = await timed('context', () => this.events.context(command.projectId, command.dataSourceId, typeUids));
    return context && new CheckedWrite(this.events, command, context, this.o.resent);
  }
}

class CheckedWrite implements DedupWrite {
  constructor(
    private readonly events: EventsRepository,
    private readonly command: WriteCommand,
    readonly context: EventWriteContext,
    private readonly resent: boolean,
  ) {}

  /**
   * In one transaction: lock the live contacts (FOR SHARE, until the events are on the topic:
   * a delete racing this write commits after them, so its erase marker follows them) and mark
   * the ids, produce the fresh events, wait for the acks, COMMIT.
   */
  async produceFresh(candidates: ParsedEvent[], produce: ProduceEvents): Promise<void> {
    if (candidates.length === 0) return;
    await timed('transaction', async () => {
      const { tx, marked } = await this.openAndLock(candidates);
      try {
        const seen = new Set<string>();
        const admitted = candidates.filter((e) => {
          // Not live (rule 1) or a duplicate: success, not produced (again).
          if (!marked.live.has(e.userId) || !marked.fresh.has(e.eventId) || seen.has(e.eventId)) return false;
          seen.add(e.eventId);
          return true;
        });
        await produce(admitted);
        await tx.commit();
      } finally {
        // A failed produce rolls the marks back; after the COMMIT, nothing to do.
        await tx.release();
      }
    });
  }

  /** Nothing is held outside produceFresh. */
  async release(): Promise<void> {}

  private openAndLock(candidates: ParsedEvent[]) {
    const { projectId, dataSourceId } = this.command;
    return this.events.openAndLock(projectId, dataSourceId, candidates, { resent: this.resent }).catch((err: unknown) => {
      if (!(err instanceof ResentEventIds)) throw err;
      return this.events.openAndLock(projectId, dataSourceId, candidates, { resent: true });
    });
  }
}
