import type { ClickHouse } from '@meld/clickhouse';
import { Topics, audienceChange, type AudienceChange } from '@meld/contracts';
import { DeadLetterError, createSinkRunner, sinkHandler, type ConsumerRunner, type SinkHandler, type SinkRunnerOptions } from '@meld/kafka';
import type { DataSource } from 'typeorm';
import { type AudienceContactRow, type ProjectContext, attributeKeys, snapshotRow, tombstoneRow } from './audience-contact-row';
import { AudienceSnapshotWriter } from './audience-snapshot.writer';
import { type MembershipStep, writeMembership } from './membership-batch';
import { messageRows } from './membership';
import { MembershipRepository } from './membership.repository';
import { ProjectContextCache } from './project-context.cache';
import type { SinkOptions } from './sink-options';

/**
 * A `meld.audience.v1` message as the sink stores it (`merge` messages store nothing: the
 * survivor's snapshot lists its members and identity-merge tombstones each absorbed id).
 */
export type AudienceSinkRow = MembershipStep;

/**
 * The row of a message, synchronous as the sink runner takes it: a message naming a source
 * contact that is not `<dataSourceId>/<userId>` is dead-lettered at once (a pure check fails the
 * same way on every retry). The reason gives a count, not the ids: user ids are phones and
 * emails (ADR 0338).
 */
export function audienceSinkRow(m: AudienceChange): AudienceSinkRow | undefined {
  if (m.kind === 'merge') return undefined;
  const membership = messageRows(m);
  if (membership.invalid.length) throw new DeadLetterError(`${membership.invalid.length} dsContactIds not of the form <dataSourceId>/<userId>`);
  return { change: m, rows: membership.rows, removalsKnown: membership.removalsKnown };
}

/**
 * `meld.audience.v1` → ClickHouse `audience_membership`, `audience_contacts` and
 * `audience_snapshot` (its collapsing twin, AudienceSnapshotWriter), through the libs/kafka sink
 * runner (ADR 0339, as the events sink since ADR 0065): fetching continues while one write stores
 * everything taken since the last one, and offsets are committed after it. Writes come one at a
 * time, in taken order (per partition, offset order), so the messages of one audience id (one
 * key, one partition) reach ClickHouse in order and no two writes touch one contact at once.
 *
 * A write, per batch: the catalogue of each project named (ProjectContextCache), then at once
 * - membership (writeMembership): a snapshot upserts one live row per listed source contact and
 *   removals come from the message (`removedDsContactIds`, set by identity-merge, which knows who
 *   left), so nothing is read; a message without that list (published before it existed) makes the
 *   sink read the audience contact's stored members, after the rows of the batch's earlier
 *   messages of that id are written;
 * - `audience_contacts` (still written for one release so a rollback of the readers stays safe,
 *   ADR 0245), one insert;
 * - the collapsing snapshot every count and probe reads (ADRs 0223, 0243), which keeps the
 *   newest of several states of a contact in the batch.
 * Every part is idempotent for a replay (the runner's rule): the tables keep the highest version
 * per key and the snapshot writer reads back before it writes. A failed part fails the write
 * only once the others settled, so the retry never runs beside a write still in flight (the
 * snapshot writer's read-back would miss that write's rows and cancel a state twice).
 */
export class AudienceSink {
  private readonly membership: MembershipRepository;
  private readonly snapshot: AudienceSnapshotWriter;
  private readonly projects: ProjectContextCache;

  constructor(
    private readonly ch: ClickHouse,
    db: DataSource,
  ) {
    this.projects = new ProjectContextCache(db);
    this.membership = new MembershipRepository(ch);
    this.snapshot = new AudienceSnapshotWriter(ch);
  }

  handler(): SinkHandler<AudienceChange, AudienceSinkRow> {
    return sinkHandler({ topic: Topics.audience, schema: audienceChange, toRow: audienceSinkRow, write: (rows) => this.write(rows) });
  }

  async write(rows: AudienceSinkRow[]): Promise<void> {
    const contacts = await this.contactRows(rows);
    const parts = await Promise.allSettled([
      writeMembership(this.membership, rows),
      contacts.length ? this.ch.insert('audience_contacts', contacts) : undefined,
      this.snapshot.write(contacts),
    ]);
    const failed = parts.find((p): p is PromiseRejectedResult => p.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** The `audience_contacts` row of each message, snapshots typed by their project's catalogue. */
  private async contactRows(rows: readonly AudienceSinkRow[]): Promise<AudienceContactRow[]> {
    const contexts = await this.contexts(rows);
    return rows.map(({ change }) => (change.kind === 'tombstone' ? tombstoneRow(change) : snapshotRow(change, contexts.get(change.projectId)!)));
  }

  /**
   * One catalogue per project of the batch, asked for every attribute its snapshots name at the
   * latest step time among them: a key unknown to a catalogue older than that step reloads it
   * (ProjectContextCache), so each snapshot is typed by a catalogue at least as new as it needs.
   */
  private async contexts(rows: readonly AudienceSinkRow[]): Promise<Map<string, ProjectContext>> {
    const needs = new Map<string, { keys: Set<string>; at: string }>();
    for (const { change } of rows) {
      if (change.kind !== 'snapshot') continue;
      const need = needs.get(change.projectId);
      if (!need) needs.set(change.projectId, { keys: new Set(attributeKeys(change)), at: change.at });
      else {
        for (const key of attributeKeys(change)) need.keys.add(key);
        if (Date.parse(change.at) > Date.parse(need.at)) need.at = change.at;
      }
    }
    return new Map(await Promise.all([...needs].map(async ([projectId, need]) => [projectId, await this.projects.get(projectId, [...need.keys], need.at)] as const)));
  }
}

/** The audience consumer; `common` is what every probes consumer shares (client, logger, retries, group). */
export function createAudienceSinkRunner(common: Omit<SinkRunnerOptions, 'sink'>, sink: AudienceSink, options: Pick<SinkOptions, 'audienceMaxRows' | 'audienceLingerMs'>): ConsumerRunner {
  return createSinkRunner({ ...common, sink: sink.handler(), maxRows: options.audienceMaxRows, lingerMs: options.audienceLingerMs });
}
