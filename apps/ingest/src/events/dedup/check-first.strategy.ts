import type { PoolClient } from 'pg';
import type { WriteCommand } from '../../write/write.command';
import type { ParsedEvent } from '../event-item';
import { type EventsRepository, ResentEventIds } from '../events.repository';
import { timed } from '../write-stages';
import { type DedupStrategy, type DedupWrite, OpenDedupWrite, type OpenedWrite, type ProduceEvents } from './dedup-write';

/**
 * Checks first, marks after: three round trips to Postgres. BEGIN with the context; the
 * caller's checks and `_user_data` upserts (which may create the contacts that make events
 * live); then lock-and-mark, produce and COMMIT before the answer. `resent`: the batch holds
 * an id accepted before, so the marks skip existing ids (ON CONFLICT) instead of failing on
 * them; a write that did not know it and meets one goes again in a new transaction.
 */
export class CheckFirst implements DedupStrategy {
  constructor(
    private readonly events: EventsRepository,
    private readonly o: { resent: boolean },
  ) {}

  async open(command: WriteCommand, typeUids: string[]): Promise<DedupWrite | null> {
    const opened = await timed('context', () => this.events.open(command.projectId, command.dataSourceId, typeUids));
    return opened && new CheckedWrite({ events: this.events, command, tx: opened.tx, context: opened.context }, this.o.resent);
  }
}

class CheckedWrite extends OpenDedupWrite {
  constructor(
    opened: OpenedWrite,
    private readonly resent: boolean,
  ) {
    super(opened);
  }

  async produceFresh(candidates: ParsedEvent[], produce: ProduceEvents): Promise<void> {
    if (candidates.length === 0) return;
    const { events, tx } = this.opened;
    await timed('transaction', async () => {
      await this.markAndProduce(tx.client, candidates, this.resent, produce);
      await tx.commit();
    }).catch(async (err: unknown) => {
      if (!(err instanceof ResentEventIds)) throw err;
      await tx.release();
      return timed('transaction', () => events.transaction((again) => this.markAndProduce(again, candidates, true, produce)));
    });
  }

  /**
   * In the write's transaction: lock the live contacts (FOR SHARE, until the events are on the
   * topic: a delete racing this write commits after them, so its erase marker follows them) and
   * mark the ids, then produce the fresh events and wait for the acks (COMMIT is the caller's).
   */
  private async markAndProduce(tx: PoolClient, candidates: ParsedEvent[], resent: boolean, produce: ProduceEvents): Promise<void> {
    const { projectId, dataSourceId } = this.opened.command;
    const { live, fresh } = await this.opened.events.lockAndMark(tx, projectId, dataSourceId, candidates, { resent });
    const seen = new Set<string>();
    const admitted = candidates.filter((e) => {
      // Not live (rule 1) or a duplicate: success, not produced (again).
      if (!live.has(e.userId) || !fresh.has(e.eventId) || seen.has(e.eventId)) return false;
      seen.add(e.eventId);
      return true;
    });
    await produce(admitted);
  }
}
