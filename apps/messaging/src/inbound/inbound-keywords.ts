import { DATA_SOURCE } from '@meld/db';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import { MessagingContacts, type SourceRef } from '../contacts/messaging-contacts';
import { inboundNumber, keywordConsent } from './keywords';

/** A mobile-originated SMS (a deliver_sm that is not a receipt). */
export interface InboundSms {
  /** The handset's number as the SMSC gives it (international digits, with or without +). */
  from: string;
  /** The address it was sent to: one of our senders' aliases. */
  to: string;
  text: string;
}

interface ProjectKeywords {
  projectId: string;
  optOut: string[] | null;
  optIn: string[] | null;
  /** generalConfig.channelSms.autoCreateContactsOnInbounds is true. */
  autoCreate: boolean;
}

/**
 * Inbound keywords (ADR 0183): a message to a sender's alias whose whole text is one of the
 * project's opt-out keywords (`generalConfig.channelSms.optOutKeywords`) records
 * `_consent_sms: opt-out` on every audience contact of that number in each project owning a
 * sender with that alias; an opt-in keyword records `opt-in`. Other texts change no contact
 * (conversations are not built).
 *
 * A number no contact has (ADR 0343): when the project's `autoCreateContactsOnInbounds` is
 * true, any message creates its contact (the way outbound auto-creation does, ADR 0184) with
 * the keyword's consent; when false, only an opt-out keyword does, so that no opt-out is ever
 * dropped. Our own not yet merged contact of the number counts as a contact of it. A sender
 * address that is not a valid international number is ignored. Neither the number nor the
 * text is logged.
 */
@Injectable()
export class InboundKeywords {
  private readonly log = new Logger('sms-inbound');

  constructor(
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    private readonly contacts: MessagingContacts,
  ) {}

  /** Resolves once the consent is committed (the SMSC is answered after it); the count of contacts changed or created. */
  async receive(sms: InboundSms): Promise<number> {
    const e164 = inboundNumber(sms.from);
    if (!e164) {
      this.log.log('inbound message from an address that is not a valid international number: ignored');
      return 0;
    }
    let changed = 0;
    for (const project of await this.projectsOf(sms.to)) {
      const status = keywordConsent(sms.text, project);
      if (!status && !project.autoCreate) continue;
      const audienceIds = await this.contactsByPhone(project.projectId, e164);
      const { count, done } = await this.contacts.transaction(async (em) => {
        const sources = await this.sourcesOf(em, project.projectId, e164, audienceIds);
        if (sources.length > 0) {
          if (!status) return { count: 0, done: 'nothing recorded' };
          for (const source of sources) await this.contacts.recordConsent(em, project.projectId, source, status);
          return { count: sources.length, done: `consent recorded on ${sources.length} contact(s)` };
        }
        // No contact stands for the number. An opt-out creates one even with the setting off (ADR 0343).
        if (!project.autoCreate && status !== 'opt-out') return { count: 0, done: 'nothing recorded' };
        await this.contacts.createForPhone(em, project.projectId, e164, { consent: status });
        return { count: 1, done: 'contact created' };
      });
      changed += count;
      this.log.log(`inbound ${status ?? 'non-keyword'} message for project ${project.projectId}: ${done}`);
    }
    this.contacts.committed();
    return changed;
  }

  /**
   * The projects owning a sender of the address. A number is compared without its `+`: SMPP
   * addresses carry none (the SMSC writes international digits), while an alias is often
   * written in E.164, as Twilio users write their numbers.
   */
  private projectsOf(alias: string): Promise<ProjectKeywords[]> {
    // A comparison, not a cast: a stored value that is not a boolean must not fail the message (the SMSC would resend it forever).
    return this.ds.query(
      `SELECT DISTINCT p.id AS "projectId", p.general_config #> '{channelSms,optOutKeywords}' AS "optOut", p.general_config #> '{channelSms,optInKeywords}' AS "optIn",
              COALESCE(p.general_config #> '{channelSms,autoCreateContactsOnInbounds}' = 'true'::jsonb, false) AS "autoCreate"
         FROM senders s JOIN projects p ON p.id = s.project_id
        WHERE s.channel = 'sms' AND (s.alias = $1 OR (ltrim($1, '+') ~ '^[0-9]+$' AND ltrim(s.alias, '+') = ltrim($1, '+')))`,
      [alias],
    );
  }

  /**
   * The source contacts standing for the number, once each: those of its audience contacts, and
   * our own contact of the number, which identity-merge may not have merged yet (a STOP then a
   * START before the merge both reach it).
   */
  private async sourcesOf(em: EntityManager, projectId: string, e164: string, audienceIds: readonly string[]): Promise<SourceRef[]> {
    const sources = new Map<string, SourceRef>();
    for (const audienceId of audienceIds) {
      const source = await this.contacts.sourceOf(em, projectId, audienceId);
      if (source) sources.set(`${source.dataSourceId}/${source.userId}`, source);
    }
    const own = await this.contacts.ofPhone(projectId, e164, em);
    if (own) sources.set(`${own.source.dataSourceId}/${own.source.userId}`, own.source);
    return [...sources.values()];
  }

  /** Every audience contact of the number, by merge key or merged attribute (as the send's phone lookup). */
  private async contactsByPhone(projectId: string, e164: string): Promise<string[]> {
    const rows: { id: string }[] = await this.ds.query(
      `SELECT m.audience_id AS id FROM merge_keys k
         JOIN audience_members m ON m.project_id = k.project_id AND m.data_source_id = k.data_source_id AND m.user_id = k.user_id
        WHERE k.project_id = $1 AND k.attribute = '_phone_mobile' AND k.value = $2
       UNION SELECT c.id FROM audience_contacts c WHERE c.project_id = $1 AND c.attributes->>'_phone_mobile' = $2
       LIMIT 100`,
      [projectId, e164],
    );
    return rows.map((r) => r.id);
  }
}
