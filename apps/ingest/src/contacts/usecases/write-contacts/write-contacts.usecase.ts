import { Injectable } from '@nestjs/common';
import { OutboxRelay } from '../../../outbox/outbox-relay';
import { StreamScope } from '../../../stream/stream-scope';
import { echoUserId, type ItemOutcome, parseBatch, writeOutcome } from '../../../write/write-batch';
import type { WriteCommand } from '../../../write/write.command';
import { userIdError } from '../../contact-item';
import { ContactPatches } from '../../contact-patches';
import { type ContactWrite, SourceContactsRepository, stateTooLargeMessage } from '../../source-contacts.repository';

const SKIP = new Set(['_user_id']);

/**
 * `POST /stream/contacts`: validates each item (`_user_id` required, attributes against the
 * catalogue), then upserts the valid ones with their outbox rows in one transaction; the
 * answer leaves after COMMIT, so an accepted contact is durable (the relay publishes it).
 * Partial failure does not block the other items; 422 only when every item failed. An item
 * that would grow its contact past 256 KiB is refused whole, an error on `_user_id` (ADR 0346).
 */
@Injectable()
export class WriteContacts {
  constructor(
    private readonly scope: StreamScope,
    private readonly contacts: SourceContactsRepository,
    private readonly patches: ContactPatches,
    private readonly relay: OutboxRelay,
  ) {}

  async execute(command: WriteCommand) {
    await this.scope.writableDataSource(command);
    const items = parseBatch(command.body, 'contacts');
    const outcomes = await this.contacts.transaction(async (tx) => {
      const results = await this.patches.prepare(
        tx,
        command.projectId,
        // An item refused for its `_user_id` still has its attributes checked, but creates none.
        items.map((attributes) => ({ attributes, skip: SKIP, failed: userIdError(attributes._user_id) !== null })),
      );
      const writes: ContactWrite[] = [];
      /** The item of each write. */
      const itemOf: number[] = [];
      const out = items.map((item, i): ItemOutcome => {
        const userId = echoUserId(item._user_id);
        const idError = userIdError(item._user_id);
        const result = results[i];
        if (idError || !result.ok) {
          const errors = result.ok ? {} : { ...result.errors };
          if (idError) errors._user_id = [idError];
          return { status: 'error', _user_id: userId, errors };
        }
        // A direct write: stamped under its contact's row lock, not with this process' clock (ADR 0349).
        writes.push({ userId: userId!, patch: result.patch });
        itemOf.push(i);
        return { status: 'success', _user_id: userId };
      });
      const { refused } = await this.contacts.upsert(tx, command.projectId, command.dataSourceId, writes);
      for (const { index, bytes } of refused) out[itemOf[index]] = { status: 'error', _user_id: writes[index].userId, errors: { _user_id: [stateTooLargeMessage(bytes)] } };
      return out;
    });
    this.relay.nudge();
    return writeOutcome(outcomes);
  }
}
