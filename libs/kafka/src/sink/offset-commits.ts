import { errorSummary } from '@meld/contracts';
import type { Consumer } from 'kafkajs';
import type { Logger } from '../logger';

/** The writer's commits: per partition, the last offset whose row is stored, for partitions this member owns. */
export class OffsetCommits {
  /** Stored but not yet committed, per partition (a failed commit is retried with the next one). */
  private readonly uncommitted = new Map<number, string>();
  /** This member's partitions of the topic; undefined until the first join. */
  private assigned: Set<number> | undefined;

  constructor(
    private readonly ctx: { group: string; topic: string; logger: Logger },
    private readonly consumer: () => Consumer,
  ) {}

  /** Follows the group's assignment: a partition that moved is the new owner's to commit. */
  listen(consumer: Consumer): void {
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      const assigned = new Set(payload.memberAssignment[this.ctx.topic] ?? []);
      this.assigned = assigned;
      for (const p of this.uncommitted.keys()) if (!assigned.has(p)) this.uncommitted.delete(p);
    });
  }

  async commit(offsets: Map<number, string>): Promise<void> {
    for (const [p, o] of offsets) {
      // The write in flight when its partition moved away: the new owner commits it. Kept, it
      // could be committed after the partition came back, behind the other owner's commit.
      if (this.assigned && !this.assigned.has(p)) continue;
      const before = this.uncommitted.get(p);
      // After a rebalance the same partition can be taken again from an older offset: keep the furthest stored.
      if (before === undefined || BigInt(o) > BigInt(before)) this.uncommitted.set(p, o);
    }
    const entries = [...this.uncommitted];
    if (entries.length === 0) return;
    const { topic } = this.ctx;
    try {
      await this.consumer().commitOffsets(entries.map(([partition, offset]) => ({ topic, partition, offset: (BigInt(offset) + 1n).toString() })));
      for (const [p, o] of entries) if (this.uncommitted.get(p) === o) this.uncommitted.delete(p);
    } catch (err) {
      // Stored anyway: the next commit carries these offsets, or a redelivery rewrites the rows.
      this.ctx.logger.warn({ group: this.ctx.group, topic, err: errorSummary(err) }, 'sink offset commit failed');
    }
  }
}
