import { DATA_SOURCE } from '@meld/db';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { MessagingContacts } from '../contacts/messaging-contacts';
import { keywordConsent } from './keywords';

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
}

/**
 * Inbound keywords (ADR 0183): a message to a sender's alias whose whole text is one of the
 * project's opt-out keywords (`generalConfig.channelSms.optOutKeywords`) records
 * `_consent_sms: opt-out` on every audience contact of that number in each project owning a
 * sender with that alias; an opt-in keyword records `opt-in`. Anything else is ignored
 * (conversations are not built). Neither the number nor the text is logged.
 */
@Injectable()
export class InboundKeywords {
  private readonly log = new Logger('sms-inbound');

  constructor(
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    private readonly contacts: MessagingContacts,
  ) {}

  /** Resolves once the consent is committed (the SMSC is answered after it); the count of contacts changed. */
  async receive(sms: InboundSms): Promise<number> {
    const e164 = `+${sms.from.replace(/^\+/, '')}`;
    let changed = 0;
    for (const project of await this.projectsOf(sms.to)) {
      const status = keywordConsent(sms.text, project);
      if (!status) continue;
      const audienceIds = await this.contactsByPhone(project.projectId, e164);
      await this.contacts.transaction(async (em) => {
        for (const audienceId of audienceIds) {
          const source = await this.contacts.sourceOf(em, project.projectId, audienceId);
          if (source) await this.contacts.recordConsent(em, project.projectId, source, status);
          if (source) changed++;
        }
      });
      this.log.log(`inbound ${status} keyword for ${audienceIds.length} contact(s) of project ${project.projectId}`);
    }
    this.contacts.committed();
    return changed;
  }

  private projectsOf(alias: string): Promise<ProjectKeywords[]> {
    return this.ds.query(
      `SELECT DISTINCT p.id AS "projectId", p.general_config #> '{channelSms,optOutKeywords}' AS "optOut", p.general_config #> '{channelSms,optInKeywords}' AS "optIn"
         FROM senders s JOIN projects p ON p.id = s.project_id WHERE s.channel = 'sms' AND s.alias = $1`,
      [alias],
    );
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
