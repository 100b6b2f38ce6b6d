import { type ConsentStatus, consentOf } from '@meld/contracts';
import { DATA_SOURCE } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { SmsEncoding } from './text/sms-parts';
import type { SmsStatus } from './status/sms-status';

export interface SendSettings {
  locale: string;
  defaultSmsSender: string | null;
  autoCreateContacts: boolean;
  prepaid: boolean;
  shortTrackingDomain: string | null;
  unsubscribeTrackingDomain: string | null;
}

export interface SenderRow {
  id: string;
  alias: string;
  status: string;
}

export interface SenderCountryRow {
  accepted: boolean;
  effectiveStatus: string;
  price: string;
}

export interface TargetContact {
  id: string;
  attributes: Record<string, unknown>;
}

/** What the worker needs to submit a message. */
export interface SubmitRow {
  id: string;
  status: SmsStatus;
  source: string;
  destination: string;
  text: string;
  encoding: SmsEncoding;
  messagesCount: number;
  optedOut: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID.test(value);

/** SQL of the messaging app over its own tables and the tenancy and audience tables it reads. */
@Injectable()
export class SmsRepository {
  constructor(@Inject(DATA_SOURCE) readonly ds: DataSource) {}

  async sendSettings(projectId: string): Promise<SendSettings | null> {
    const [row] = await this.ds.query(
      `SELECT p.locale, p.default_sms_sender AS "defaultSmsSender",
              COALESCE((p.general_config #>> '{channelSms,autoCreateContactsOnOutbounds}')::boolean, false) AS "autoCreateContacts",
              o.prepaid, p.short_tracking_domain AS "shortTrackingDomain", p.unsubscribe_tracking_domain AS "unsubscribeTrackingDomain"
         FROM projects p JOIN organizations o ON o.id = p.organization_id WHERE p.id = $1`,
      [projectId],
    );
    return row ?? null;
  }

  async smsSender(projectId: string, senderId: string): Promise<SenderRow | null> {
    if (!isUuid(senderId)) return null;
    const [row] = await this.ds.query(`SELECT id, alias, status FROM senders WHERE project_id = $1 AND id = $2 AND channel = 'sms'`, [projectId, senderId]);
    return row ?? null;
  }

  async senderCountry(senderId: string, country: string): Promise<SenderCountryRow | null> {
    const [row] = await this.ds.query(
      `SELECT accepted, effective_status AS "effectiveStatus", price::text AS price FROM sender_countries WHERE sender_id = $1 AND country = $2`,
      [senderId, country],
    );
    return row ?? null;
  }

  /** An audience contact by id; an id absorbed by a merge resolves to the contact that absorbed it. */
  async contactById(projectId: string, audienceId: string): Promise<TargetContact | null> {
    if (!isUuid(audienceId)) return null;
    const [row] = await this.ds.query(
      `SELECT c.id, c.attributes FROM audience_contacts c
        WHERE c.project_id = $1 AND c.id = COALESCE((SELECT survivor_id FROM audience_aliases WHERE project_id = $1 AND absorbed_id = $2), $2)`,
      [projectId, audienceId],
    );
    return row ?? null;
  }

  /**
   * The most recently updated audience contact whose mobile is this E.164 number: by its merge
   * key when `_phone_mobile` merges, else by the merged attribute (the audience app's phone
   * search reads the same two places).
   */
  async contactByPhone(projectId: string, e164: string): Promise<TargetContact | null> {
    const [row] = await this.ds.query(
      `WITH ids AS (
         SELECT m.audience_id AS id FROM merge_keys k
           JOIN audience_members m ON m.project_id = k.project_id AND m.data_source_id = k.data_source_id AND m.user_id = k.user_id
          WHERE k.project_id = $1 AND k.attribute = '_phone_mobile' AND k.value = $2
         UNION SELECT c.id FROM audience_contacts c WHERE c.project_id = $1 AND c.attributes->>'_phone_mobile' = $2)
       SELECT c.id, c.attributes FROM audience_contacts c JOIN ids ON ids.id = c.id
        WHERE c.project_id = $1 ORDER BY c.updated_at DESC, c.id DESC LIMIT 1`,
      [projectId, e164],
    );
    return row ?? null;
  }

  async byIdempotencyKey(projectId: string, key: string): Promise<{ requestHash: string; response: unknown } | null> {
    const [row] = await this.ds.query(`SELECT request_hash AS "requestHash", response FROM sms_messages WHERE project_id = $1 AND idempotency_key = $2`, [projectId, key]);
    return row ?? null;
  }

  async forSubmit(smsId: string): Promise<SubmitRow | null> {
    const [row] = await this.ds.query(
      `SELECT m.id, m.status, s.alias AS source, m.destination, m.text, m.encoding, m.messages_count AS "messagesCount", c.attributes
         FROM sms_messages m JOIN senders s ON s.id = m.sender_id
         LEFT JOIN audience_contacts c ON c.project_id = m.project_id AND c.id = m.audience_id
        WHERE m.id = $1`,
      [smsId],
    );
    if (!row) return null;
    const consent: ConsentStatus = row.attributes ? consentOf(row.attributes, 'sms') : null;
    const { attributes: _attributes, ...rest } = row;
    return { ...rest, optedOut: consent === 'opt-out' };
  }

  async idBySmscId(smscMessageId: string): Promise<string | null> {
    const [row] = await this.ds.query(`SELECT id FROM sms_messages WHERE smsc_message_id = $1 ORDER BY created_at DESC LIMIT 1`, [smscMessageId]);
    return row?.id ?? null;
  }

  async staleEnqueued(olderThanMs: number, limit = 500): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.ds.query(
      `SELECT id FROM sms_messages WHERE status = 'enqueued' AND created_at < now() - make_interval(secs => $1) ORDER BY created_at LIMIT $2`,
      [olderThanMs / 1000, limit],
    );
    return rows.map((r) => r.id);
  }
}
