import type { ClickHouse } from '@meld/clickhouse';
import { Topics, audienceChange, type AudienceChange } from '@meld/contracts';
import { DeadLetterError, topicHandler, type ConsumedMessage, type TopicHandler } from '@meld/kafka';
import type { DataSource } from 'typeorm';
import { type AudienceContactRow, attributeKeys, snapshotRow, tombstoneRow } from './audience-contact-row';
import { AudienceSnapshotWriter } from './audience-snapshot.writer';
import { InsertBuffer } from './insert-buffer';
import { type MembershipChange, type MembershipRow, messageRows, removalRows } from './membership';
import { MembershipRepository } from './membership.repository';
import { ProjectContextCache } from './project-context.cache';
import type { SinkOptions } from './sink-options';

/**
 * Legacy reads at once: each scans the project's membership, and the runner keeps up to
 * audienceConcurrency() messages in flight (a backlog of old messages would otherwise send
 * ClickHouse a thousand scans at once).
 */
const MAX_LEGACY_READS = 8;

/**
 * `meld.audience.v1` → ClickHouse `audience_membership`, `audience_contacts` and
 * `audience_snapshot` (the collapsing twin of audience_contacts, AudienceSnapshotWriter).
 *
 * Both tables keep the highest version per key and are read with argMax / FINAL, so the order
 * in which rows are inserted does not matter: the rows of all messages in flight go into one
 * insert per table (InsertBuffer), and a message is done once its rows are stored.
 *
 * Membership: a snapshot upserts one live row per listed source contact; removals come from
 * the message (`removedDsContactIds`, set by identity-merge, which knows who left), so nothing
 * is read. Only a message without that list (published before it existed) makes the sink read
 * the audience contact's current members to remove those no longer listed; per-key order (the
 * runner) makes the earlier messages of that id stored by then.
 */
export class AudienceSink {
  private readonly membership: MembershipRepository;
  private readonly memberRows: InsertBuffer<MembershipRow>;
  private readonly contactRows: InsertBuffer<AudienceContactRow>;
  private readonly projects: ProjectContextCache;
  /** Legacy reads in flight, and those waiting for a slot. */
  private reads = 0;
  private readonly readQueue: Array<() => void> = [];

  constructor(ch: ClickHouse, db: DataSource, options: Pick<SinkOptions, 'maxRows' | 'lingerMs'>) {
    this.projects = new ProjectContextCache(db);
    this.membership = new MembershipRepository(ch);
    this.memberRows = new InsertBuffer<MembershipRow>((rows) => this.membership.insert(rows), options);
    const snapshot = new AudienceSnapshotWriter(ch);
    // audience_contacts (kept for one release so a rollback of the readers stays safe, ADR 0245) and its collapsing
    // twin, which every count and probe reads (ADRs 0223, 0243).
    this.contactRows = new InsertBuffer<AudienceContactRow>(async (rows) => {
      await Promise.all([ch.insert('audience_contacts', rows), snapshot.write(rows)]);
    }, options);
  }

  handler(): TopicHandler<unknown> {
    return topicHandler({ topic: Topics.audience, schema: audienceChange, handle: (m) => this.handle(m) }) as TopicHandler<unknown>;
  }

  async handle(message: ConsumedMessage<AudienceChange>): Promise<void> {
    const m = message.value;
    if (m.kind === 'merge') return;
    const membership = messageRows(m);
    if (membership.invalid.length) throw new DeadLetterError(`${membership.invalid.length} dsContactIds not of the form <dataSourceId>/<userId>`); // not the ids: user ids are phones and emails (ADR 0338)
    // Both tables are idempotent by version: a retry after one of them failed rewrites the same rows.
    await Promise.all([this.writeMembership(m, membership.rows, membership.removalsKnown), this.writeContact(m)]);
  }

  /** Stores what waits now (shutdown). */
  flush(): void {
    this.memberRows.flush();
    this.contactRows.flush();
  }

  /** At most MAX_LEGACY_READS at once; a finished read hands its slot to the next waiting one. */
  private async limitedRead<T>(read: () => Promise<T>): Promise<T> {
    if (this.reads >= MAX_LEGACY_READS) await new Promise<void>((resolve) => this.readQueue.push(resolve));
    else this.reads++;
    try {
      return await read();
    } finally {
      const next = this.readQueue.shift();
      if (next) next();
      else this.reads--;
    }
  }

  private async writeContact(m: MembershipChange): Promise<void> {
    if (m.kind === 'tombstone') return this.contactRows.add(tombstoneRow(m));
    const context = await this.projects.get(m.projectId, attributeKeys(m), m.at);
    return this.contactRows.add(snapshotRow(m, context));
  }

  private async writeMembership(m: MembershipChange, rows: MembershipRow[], removalsKnown: boolean): Promise<void> {
    if (!removalsKnown) {
      const current = await this.limitedRead(() => this.membership.currentMembers(m.projectId, m.audienceId));
      rows = [...rows, ...removalRows(m.projectId, m.audienceId, m.at, current, new Set(m.kind === 'snapshot' ? m.dsContactIds : []))];
    }
    await Promise.all(rows.map((r) => this.memberRows.add(r)));
  }
}

/** Keys in flight per partition batch for the audience consumer: enough for one insert per batch. */
export function audienceConcurrency(options: Pick<SinkOptions, 'maxRows'>): number {
  return Math.min(options.maxRows, 1000);
}
