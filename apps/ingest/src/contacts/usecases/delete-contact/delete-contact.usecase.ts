import { Outputs } from '@meld/contracts';
import { Injectable, NotFoundException } from '@nestjs/common';
import { IngestProducer } from '../../../outbox/ingest-producer';
import { OutboxRelay } from '../../../outbox/outbox-relay';
import { StreamScope } from '../../../stream/stream-scope';
import type { StreamCommand } from '../../../stream/stream.command';
import { userIdError } from '../../contact-item';
import { SourceContactsRepository } from '../../source-contacts.repository';

export interface DeleteContactCommand extends StreamCommand {
  userId: string;
}

/**
 * `DELETE /stream/contacts/{userId}`, for good: the contact's personal data leaves
 * `source_contacts` in the same transaction as its outbox row, the `meld.contacts.v1` delete
 * (identity-merge recomputes the audience without it). The `meld.events.v1` erase marker (its
 * events leave ClickHouse) is produced before the COMMIT, acked, while the transaction holds
 * the contact's row (ADR 0039), right after the contact's events still queued in the outbox:
 * after every event written before the delete, before any event of the contact re-created
 * after it. A failed produce fails the delete (500, nothing changed).
 * No live contact of that id in this data source → 404.
 */
@Injectable()
export class DeleteContact {
  constructor(
    private readonly scope: StreamScope,
    private readonly contacts: SourceContactsRepository,
    private readonly relay: OutboxRelay,
    private readonly producer: IngestProducer,
  ) {}

  async execute(command: DeleteContactCommand) {
    await this.scope.dataSource(command);
    // No contact can hold an id that fails the write's checks (U+0000 would fail in Postgres).
    if (userIdError(command.userId)) throw new NotFoundException('contact not found');
    const deleted = await this.contacts.transaction(async (tx) => {
      const deleted = await this.contacts.delete(tx, command.projectId, command.dataSourceId, command.userId);
      if (!deleted) return false;
      const { topic, schema, key } = Outputs.events;
      // The queued events were checked when they were queued; the relay would send them as they are too.
      await this.producer.send(topic, [...deleted.queuedEvents, { key: key(deleted.erase), value: schema.parse(deleted.erase) }]);
      return true;
    });
    if (!deleted) throw new NotFoundException('contact not found');
    this.relay.nudge();
    return { entity: { _user_id: command.userId, deleted: true } };
  }
}
