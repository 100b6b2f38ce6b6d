import { createHash, randomUUID } from 'node:crypto';
import { consentOf } from '@meld/contracts';
import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { envVars, loadConfig } from '@meld/platform';
import { z } from 'zod';
import { MessagingContacts } from '../../contacts/messaging-contacts';
import { LinksRepository } from '../../links/links.repository';
import { linkOrigin, renderTemplate } from '../../links/text-template';
import { SendQueue } from '../delivery/send-queue';
import type { DirectSmsResponse } from '../sms.schema';
import { type SendSettings, SmsRepository, type TargetContact } from '../sms.repository';
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

/** How long a send to an auto-created contact waits for identity-merge to give it an audience id (ADR 0184). */
const AUTO_CREATE_WAIT_MS = 3000;

/** The contact a message goes to: an auto-created one may not be merged yet (no id). */
type SendContact = Omit<TargetContact, 'id'> & { id: string | null };

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
    private readonly links: LinksRepository,
    private readonly contacts: MessagingContacts,
  ) {
    this.publicUrl = loadConfig(z.object({ MELD_PUBLIC_URL: envVars.httpUrl.default('http://127.0.0.1:8080') })).MELD_PUBLIC_URL.replace(/\/+$/, '');
  }

  private readonly publicUrl: string;

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

    const { contact, destination, autoCreated } = await this.target(cmd.projectId, cmd.target, settings);
    if (consentOf(contact.attributes, 'sms') === 'opt-out') throw refuse('opted_out', 'the contact opted out of SMS');

    const country = await this.repo.senderCountry(sender.id, destination.country);
    if (!country?.accepted || country.effectiveStatus !== 'active') {
      throw refuse('country_not_accepted', `sender ${sender.id} is not active for ${destination.country}`, { country: destination.country });
    }

    // Encoding and parts are those of the text as sent, links substituted (ADR 0182).
    const { text, links } = renderTemplate(cmd.text, {
      short: linkOrigin(settings.shortTrackingDomain, this.publicUrl),
      unsubscribe: linkOrigin(settings.unsubscribeTrackingDomain, this.publicUrl),
    });
    const parts = smsParts(text);
    const price = Number(country.price);
    const cost = settings.prepaid ? price * parts.messagesCount : 0;
    const id = randomUUID();
    const response: DirectSmsResponse = {
      entity: { id, status: 'enqueued', encoding: parts.encoding, messagesCount: parts.messagesCount, pricePerSms: price, audienceId: contact.id },
      metadata: { autoCreated },
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
          [id, cmd.projectId, cmd.organizationId, sender.id, contact.id, destination.e164, destination.country, text, parts.encoding, parts.messagesCount, price,
            cmd.idempotencyKey ?? null, requestHash, JSON.stringify(response), cost],
        );
        if (!inserted.length) throw new DuplicateKey();
        await this.links.insert(em, cmd.projectId, id, links);
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

  private async target(projectId: string, target: string, settings: SendSettings): Promise<{ contact: SendContact; destination: Destination; autoCreated: boolean }> {
    const byId = await this.repo.contactById(projectId, target);
    if (byId) {
      const destination = contactDestination(byId.attributes, settings.locale);
      if (!destination) throw refuse('no_phone', 'the contact has no valid mobile number (_phone_mobile)');
      return { contact: byId, destination, autoCreated: false };
    }
    const destination = destinationOf(target, settings.locale);
    if (!destination) {
      throw new BadRequestException({
        message: 'target: not an audience contact id nor a valid phone number (E.164, or national in the project locale)',
        details: { fields: [{ path: 'target', message: 'not an audience contact id nor a valid phone number' }] },
      });
    }
    const contact = await this.repo.contactByPhone(projectId, destination.e164);
    if (contact) return { contact, destination, autoCreated: false };
    if (!settings.autoCreateContacts) throw new NotFoundException('no audience contact with this phone');
    return { contact: { id: await this.autoCreate(projectId, destination.e164), attributes: {} }, destination, autoCreated: true };
  }

  /**
   * generalConfig.channelSms.autoCreateContactsOnOutbounds (ADR 0184): a source contact of the
   * messaging data source, merged by identity-merge as any ingest write. The answer waits a
   * little for the merge to give it an audience id; a slower merge leaves the message's
   * audienceId null (the contact still appears, and the number is its source contact).
   */
  private async autoCreate(projectId: string, e164: string): Promise<string | null> {
    const source = await this.contacts.transaction((em) => this.contacts.createForPhone(em, projectId, e164));
    this.contacts.committed();
    const deadline = Date.now() + AUTO_CREATE_WAIT_MS;
    for (;;) {
      const audienceId = await this.contacts.audienceOf(projectId, source);
      if (audienceId || Date.now() >= deadline) return audienceId;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
