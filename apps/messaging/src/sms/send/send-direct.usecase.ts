import { createHash, randomUUID } from 'node:crypto';
import { consentOf } from '@meld/contracts';
import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { SendQueue } from '../delivery/send-queue';
import type { DirectSmsResponse } from '../sms.schema';
import { SmsRepository, type TargetContact } from '../sms.repository';
import { StatusWriter } from '../status/status-writer';
import { smsParts } from '../text/sms-parts';
import { type Destination, contactDestination, destinationOf } from './destination';
import { refuse } from './refusal';

export interface SendDirectCommand {
  projectId: string;
  organizationId: string;
  /** A sender id, or `default`. */
  sender: string;
  /** An audience contact id, or a phone (already URL-decoded). */
  target: string;
  text: string;
  idempotencyKey?: string;
}

/** Postgres unique_violation on the idempotency index: a concurrent twin committed first. */
class DuplicateKey extends Error {}

/**
 * `POST …/channel/sms/sms/direct/{sender}/{target}` (ADR 0152): resolves the sender and the
 * target, refuses what cannot be sent now (400 bad number, 404 unknown sender or contact,
 * 422 with `details.reason`), then in one transaction reserves a prepaid organization's
 * funds (one conditional UPDATE, so concurrent sends never take it below zero), inserts the
 * message, its `enqueued` history and outbox rows; after COMMIT it queues the send. With an
 * `Idempotency-Key`, the first answer is stored with the message and a retry gets it back.
 */
@Injectable()
export class SendDirectSms {
  constructor(
    private readonly repo: SmsRepository,
    private readonly status: StatusWriter,
    private readonly queue: SendQueue,
  ) {}

  async execute(cmd: SendDirectCommand): Promise<DirectSmsResponse> {
    const requestHash = createHash('sha256').update(JSON.stringify([cmd.sender, cmd.target, cmd.text])).digest('hex');
    if (cmd.idempotencyKey) {
      const first = await this.replay(cmd.projectId, cmd.idempotencyKey, requestHash);
      if (first) return first;
    }
    const settings = await this.repo.sendSettings(cmd.projectId);
    if (!settings) throw new NotFoundException('project not found');

    const senderId = cmd.sender === 'default' ? settings.defaultSmsSender : cmd.sender;
    const sender = senderId ? await this.repo.smsSender(cmd.projectId, senderId) : null;
    if (!sender) throw new NotFoundException(cmd.sender === 'default' ? 'the project has no default SMS sender (defaultSmsSender)' : 'sender not found');
    if (sender.status !== 'active') throw refuse('sender_inactive', `sender ${sender.id} is ${sender.status}, not active`);

    const { contact, destination } = await this.target(cmd.projectId, cmd.target, settings.locale);
    if (consentOf(contact.attributes, 'sms') === 'opt-out') throw refuse('opted_out', 'the contact opted out of SMS');

    const country = await this.repo.senderCountry(sender.id, destination.country);
    if (!country?.accepted || country.effectiveStatus !== 'active') {
      throw refuse('country_not_accepted', `sender ${sender.id} is not active for ${destination.country}`, { country: destination.country });
    }

    const parts = smsParts(cmd.text);
    const price = Number(country.price);
    const cost = settings.prepaid ? price * parts.messagesCount : 0;
    const id = randomUUID();
    const response: DirectSmsResponse = {
      entity: { id, status: 'enqueued', encoding: parts.encoding, messagesCount: parts.messagesCount, pricePerSms: price, audienceId: contact.id },
      metadata: { autoCreated: false },
    };
    try {
      await this.repo.ds.transaction(async (em) => {
        if (cost > 0) {
          // TypeORM answers an UPDATE with [rows, rowCount].
          const [reserved] = await em.query(`UPDATE organizations SET funds = funds - $2::numeric WHERE id = $1 AND funds >= $2::numeric RETURNING id`, [cmd.organizationId, cost]);
          if (!reserved.length) throw refuse('insufficient_funds', 'not enough funds for this SMS', { cost });
        }
        const inserted = await em.query(
          `INSERT INTO sms_messages (id, project_id, organization_id, sender_id, audience_id, destination, country, text, encoding, messages_count, price_per_sms,
                                     idempotency_key, request_hash, response, reserved_funds)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
           ON CONFLICT (project_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING id`,
          [id, cmd.projectId, cmd.organizationId, sender.id, contact.id, destination.e164, destination.country, cmd.text, parts.encoding, parts.messagesCount, price,
            cmd.idempotencyKey ?? null, requestHash, JSON.stringify(response), cost],
        );
        if (!inserted.length) throw new DuplicateKey();
        const row = { id, project_id: cmd.projectId, organization_id: cmd.organizationId, audience_id: contact.id, sender_id: sender.id, status: 'enqueued' as const, messages_count: parts.messagesCount, reserved_funds: String(cost) };
        await this.status.apply(em, row, { status: 'enqueued' });
      });
    } catch (err) {
      // The twin's transaction held the key: this one rolled back (funds included) and answers as the twin did.
      if (err instanceof DuplicateKey) return (await this.replay(cmd.projectId, cmd.idempotencyKey!, requestHash))!;
      throw err;
    }
    this.status.committed();
    // After COMMIT: a crash before this add leaves the message `enqueued`, and the sweep queues it.
    await this.queue.add(id).catch(() => undefined);
    return response;
  }

  private async replay(projectId: string, key: string, requestHash: string): Promise<DirectSmsResponse | null> {
    const first = await this.repo.byIdempotencyKey(projectId, key);
    if (!first) return null;
    if (first.requestHash !== requestHash) throw refuse('idempotency_key_reused', 'this Idempotency-Key was used for another request');
    return first.response as DirectSmsResponse;
  }

  private async target(projectId: string, target: string, locale: string): Promise<{ contact: TargetContact; destination: Destination }> {
    const byId = await this.repo.contactById(projectId, target);
    if (byId) {
      const destination = contactDestination(byId.attributes, locale);
      if (!destination) throw refuse('no_phone', 'the contact has no valid mobile number (_phone_mobile)');
      return { contact: byId, destination };
    }
    const destination = destinationOf(target, locale);
    if (!destination) {
      throw new BadRequestException({
        message: 'target: not an audience contact id nor a valid phone number (E.164, or national in the project locale)',
        details: { fields: [{ path: 'target', message: 'not an audience contact id nor a valid phone number' }] },
      });
    }
    const contact = await this.repo.contactByPhone(projectId, destination.e164);
    // Auto-creation on outbound (generalConfig.channelSms.autoCreateContactsOnOutbounds) is not built yet (ADR 0152).
    if (!contact) throw new NotFoundException('no audience contact with this phone');
    return { contact, destination };
  }
}
