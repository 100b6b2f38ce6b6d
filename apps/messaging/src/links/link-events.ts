import { Injectable, Logger } from '@nestjs/common';
import { MessagingContacts, type SourceRef } from '../contacts/messaging-contacts';
import type { EntityManager } from 'typeorm';
import { type LinkRow, LinksRepository } from './links.repository';

/**
 * A click and a confirmed unsubscribe (ADR 0182): counted on the link and put on the
 * contact's timeline (`_sms_click`, `_sms_unsubscribe`); the unsubscribe also records
 * `_consent_sms: opt-out` through the messaging data source (ADR 0181). One transaction each.
 */
@Injectable()
export class LinkEvents {
  private readonly log = new Logger('sms-links');

  constructor(
    private readonly links: LinksRepository,
    private readonly contacts: MessagingContacts,
  ) {}

  /** The target of a short link (null: unknown code), its click recorded. */
  async click(code: string): Promise<string | null> {
    const url = await this.contacts.transaction(async (em) => {
      const link = await this.links.find(code, 'short', em);
      if (!link) return null;
      await this.links.countClick(em, code);
      const source = await this.source(em, link);
      if (source) await this.contacts.event(em, link.projectId, source, '_sms_click', { smsId: link.smsId, url: link.url });
      else this.log.warn(`SMS ${link.smsId}: its audience contact has no source contact, the click is not on a timeline`);
      return link.url;
    });
    this.contacts.committed();
    return url;
  }

  /** Records the opt-out of a confirmed unsubscribe; a second confirmation changes nothing; null: unknown code. */
  async unsubscribe(code: string): Promise<LinkRow | null> {
    const link = await this.contacts.transaction(async (em) => {
      const row = await this.links.find(code, 'unsubscribe', em);
      if (!row || row.confirmedAt) return row;
      await this.links.confirm(em, code);
      // The message's contact was deleted since: the number it went to is opted out all the same,
      // on our own contact of it, as an inbound STOP from a number no contact has (ADR 0343).
      const source = (await this.source(em, row)) ?? (await this.contacts.createForPhone(em, row.projectId, row.destination));
      await this.contacts.recordConsent(em, row.projectId, source, 'opt-out');
      await this.contacts.event(em, row.projectId, source, '_sms_unsubscribe', { smsId: row.smsId });
      return row;
    });
    this.contacts.committed();
    return link;
  }

  /**
   * A message sent before its auto-created contact was merged has no audience id: its source contact is the number (ADR 0181).
   * Null when the audience contact has no source contact left (deleted).
   */
  private async source(em: EntityManager, link: LinkRow): Promise<SourceRef | null> {
    return link.audienceId
      ? this.contacts.sourceOf(em, link.projectId, link.audienceId)
      : { dataSourceId: await this.contacts.dataSourceId(em, link.projectId), userId: link.destination };
  }
}
