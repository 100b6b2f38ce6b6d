import { createHash, randomUUID } from 'node:crypto';
import { type Destination, consentSources, destinationOf, effectiveConsent } from '@meld/contracts';
import { BadRequestException, Injectable, Logger, NotFoundException } from '@nestjs/common';
import { loadPublicUrl } from '@meld/platform';
import { SmsAudienceBackfill } from '../../audience/sms-audience-backfill';
import { MessagingContacts } from '../../contacts/messaging-contacts';
import { linkOrigin, renderTemplate } from '../../links/text-template';
import type { DirectSmsResponse } from '../sms.schema';
import { type FirstAnswer, type SendContext, SmsRepository, type TargetContact } from '../sms.repository';
import { smsParts } from '../text/sms-parts';
import { contactDestination } from './destination';
import { costUnits, toUnits } from './money';
import { isRefusal, refuse } from './refusal';
import { SendBatch, insufficientFunds } from './send-batch';

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

/**
 * `POST …/channel/sms/sms/direct/{sender}/{target}` (ADR 0152): resolves the sender and the
 * target, refuses what cannot be sent now (400 bad number, 404 unknown sender or contact,
 * 422 with `details.reason`), then stores the message with its funds reservation, history and
 * outbox rows and queues it (SendBatch, ADR 0202: concurrent requests share a transaction).
 * With an `Idempotency-Key`, the first answer is stored with the message and a retry gets it
 * back. Its reads are one statement (ADR 0201), two for a phone target, three for a phone no
 * audience contact has (our own contact of the number, ADR 0343); one more in a project that has
 * suppressed numbers (ADR 0361).
 */
@Injectable()
export class SendDirectSms {
  constructor(
    private readonly repo: SmsRepository,
    private readonly batch: SendBatch,
    private readonly contacts: MessagingContacts,
    private readonly backfill: SmsAudienceBackfill,
  ) {
    this.publicUrl = loadPublicUrl();
  }

  private readonly publicUrl: string;
  private readonly logger = new Logger('SendDirectSms');

  async execute(cmd: SendDirectCommand): Promise<DirectSmsResponse> {
    const requestHash = createHash('sha256').update(JSON.stringify([cmd.sender, cmd.target, cmd.text])).digest('hex');
    const context = await this.repo.sendContext(cmd.projectId, cmd.sender === 'default' ? null : cmd.sender, cmd.target, cmd.idempotencyKey ?? null);
    if (!context) throw new NotFoundException('project not found');
    if (context.firstAnswer) return answerOf(context.firstAnswer, requestHash);

    const { sender } = context;
    if (!sender) throw new NotFoundException(cmd.sender === 'default' ? 'the project has no default SMS sender (defaultSmsSender)' : 'sender not found');
    if (sender.status !== 'active') throw refuse('sender_inactive', `sender ${sender.id} is ${sender.status}, not active`);

    // What the request alone decides comes before any lookup of a phone: whether a contact has the
    // number changes no answer but the send's own (404, opted_out), so a caller who may not search
    // by phone learns nothing from a refusal that sends nothing (ADR 0152).
    const destination = context.contact ? contactDestination(context.contact.attributes, context.locale) : destinationOf(cmd.target, context.locale);
    if (!destination) throw context.contact ? refuse('no_phone', 'the contact has no valid mobile number (_phone_mobile)') : invalidTarget();
    const country = new Map(Object.entries(sender.countries)).get(destination.country);
    if (!country?.accepted || country.effectiveStatus !== 'active') {
      throw refuse('country_not_accepted', `sender ${sender.id} is not active for ${destination.country}`, { country: destination.country });
    }
    // A suppressed number (ADR 0361) is refused whatever its consent and funds; looked up only in a project that has any.
    if (context.hasSuppressions && (await this.repo.isSuppressed(cmd.projectId, destination.e164))) throw refuse('suppressed', 'the number is suppressed for SMS');
    // Encoding and parts are those of the text as sent, links substituted (ADR 0182).
    const { text, links } = renderTemplate(cmd.text, {
      short: linkOrigin(context.shortTrackingDomain, this.publicUrl),
      unsubscribe: linkOrigin(context.unsubscribeTrackingDomain, this.publicUrl),
    });
    const parts = smsParts(text);
    const cost = context.prepaid ? costUnits(country.price, parts.messagesCount) : 0n;
    // Funds are checked exactly in the send's transaction; this early look answers a send they cannot cover before the
    // lookup, and keeps one sure to be refused from auto-creating a contact (ADR 0184).
    // A postpaid organization (cost 0) is never refused, whatever its funds say (they may be below zero).
    if (cost > 0n && cost > toUnits(context.funds)) throw insufficientFunds(cost);

    const found = context.contact ?? (await this.contactOfPhone(cmd.projectId, destination, context));
    // Opted out of SMS, or on a channel whose opt-out reaches every channel (ADR 0347).
    if (found && effectiveConsent(found.attributes, 'sms', context.consentScopes) === 'opt-out') throw refuse('opted_out', 'the contact opted out of SMS');
    // Created only once every check this request can make has passed: a refused send leaves no contact behind (ADR 0184).
    const autoCreated = found === null;
    const contact: SendContact = found ?? { id: await this.autoCreate(cmd.projectId, destination.e164), attributes: {} };
    const price = Number(country.price);
    const id = randomUUID();
    const response: DirectSmsResponse = {
      entity: { id, status: 'enqueued', encoding: parts.encoding, messagesCount: parts.messagesCount, pricePerSms: price, audienceId: contact.id },
      metadata: { autoCreated },
    };
    const stored = await this.batch
      .store({
        id, projectId: cmd.projectId, organizationId: cmd.organizationId, senderId: sender.id, audienceId: contact.id, destination: destination.e164,
        country: destination.country, text, encoding: parts.encoding, messagesCount: parts.messagesCount, pricePerSms: price,
        idempotencyKey: cmd.idempotencyKey ?? null, requestHash, response, cost, links,
      })
      .catch((error: unknown) => this.twinOfRefused(cmd, requestHash, error));
    if (typeof stored !== 'string') return stored;
    if (stored === 'stored') {
      // The merge may have landed after the wait gave up and its snapshot been processed before this commit:
      // the message takes the id now (ADR 0184). The answer, stored for an Idempotency-Key, stays as it was.
      // A failure here fails no send that was stored: the message keeps no id, as before (logged without number).
      if (contact.id === null) await this.backfill.stored(id).catch((error: unknown) => this.logger.warn(`SMS ${id} stored without its audience id: ${(error as Error).message}`));
      return response;
    }
    // A twin with the same key committed first: this one stored nothing and answers as the twin did.
    const first = await this.repo.byIdempotencyKey(cmd.projectId, cmd.idempotencyKey!);
    if (!first) throw new Error('idempotency twin not found after its commit');
    return answerOf(first, requestHash);
  }

  /**
   * A keyed retry that arrived while its first request was being stored is charged after it (in
   * the same batch, or in the next one behind the organization's lock), so funds that covered the
   * one message refuse the retry. The first answer is committed by then: the retry gets it, as any
   * retry does, not a 422 saying a message that was sent was not (ADR 0152).
   */
  private async twinOfRefused(cmd: SendDirectCommand, requestHash: string, error: unknown): Promise<DirectSmsResponse> {
    if (cmd.idempotencyKey === undefined || !isRefusal(error, 'insufficient_funds')) throw error;
    const first = await this.repo.byIdempotencyKey(cmd.projectId, cmd.idempotencyKey);
    if (!first) throw error;
    return answerOf(first, requestHash);
  }

  /** The contact of a phone target; null for one to auto-create (the project allows it) once the send passes its checks. */
  private async contactOfPhone(projectId: string, destination: Destination, context: SendContext): Promise<TargetContact | null> {
    const contact = await this.repo.contactByPhone(projectId, destination.e164, consentSources('sms', context.consentScopes).optOut);
    if (contact) return contact;
    // A STOP from a number nobody had created our contact of it (ADR 0343): refused from its commit on, before identity-merge merged it.
    const own = await this.contacts.ofPhone(projectId, destination.e164);
    if (own && effectiveConsent(own.attributes, 'sms', context.consentScopes) === 'opt-out') throw refuse('opted_out', 'the number opted out of SMS');
    if (!context.autoCreateContacts) throw new NotFoundException('no audience contact with this phone');
    return null;
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

/** A target that is neither a contact id nor a phone. */
function invalidTarget(): BadRequestException {
  return new BadRequestException({
    message: 'target: not an audience contact id nor a valid phone number (E.164, or national in the project locale)',
    details: { fields: [{ path: 'target', message: 'not an audience contact id nor a valid phone number' }] },
  });
}

/** The stored first answer of an Idempotency-Key, if this request is the same one. */
function answerOf(first: FirstAnswer, requestHash: string): DirectSmsResponse {
  if (first.requestHash !== requestHash) throw refuse('idempotency_key_reused', 'this Idempotency-Key was used for another request');
  return first.response as DirectSmsResponse;
}
