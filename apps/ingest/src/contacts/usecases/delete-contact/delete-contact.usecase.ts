import { Injectable, NotFoundException } from '@nestjs/common';
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
 * `source_contacts` in the same transaction as its outbox rows, the `meld.contacts.v1` delete
 * (identity-merge recomputes the audience without it) and the `meld.events.v1` erase marker
 * (its events leave ClickHouse). No live contact of that id in this data source → 404.
 */
@Injectable()
export class DeleteContact {
  constructor(
    private readonly scope: StreamScope,
    private readonly contacts: SourceContactsRepository,
    private readonly relay: OutboxRelay,
  ) {}

  async execute(command: DeleteContactCommand) {
    await this.scope.dataSource(command);
    // No contact can hold an id that fails the write's checks (U+0000 would fail in Postgres).
    if (userIdError(command.userId)) throw new NotFoundException('contact not found');
    const deleted = await this.contacts.transaction((tx) =>
      this.contacts.delete(tx, command.projectId, command.dataSourceId, command.userId),
    );
    if (!deleted) throw new NotFoundException('contact not found');
    this.relay.nudge();
    return { entity: { _user_id: command.userId, deleted: true } };
  }
}
