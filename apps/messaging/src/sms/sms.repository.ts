import { type ConsentChannel, type ConsentScopes, consentAttribute, consentScopesOf, effectiveConsent } from '@meld/contracts';
import { DATA_SOURCE } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { MicroBatcher, ok } from '../batching/micro-batcher';
import { prepared } from '../db/prepared';
import { CURRENT_AUDIENCE_ID } from './current-audience-id';
import type { SmsEncoding } from './text/sms-parts';
import type { SmsStatus } from './status/sms-status';

/**
 * Of generalConfig, only the channel blocks' two consent-scope fields (ADR 0347), in the config's
 * own shape for consentScopesOf: a send and its delivery read them per message, not the whole ~1.3 KB config.
 */
const SCOPE_FIELDS = `(SELECT jsonb_object_agg(b.key, jsonb_build_object('marketingOptOutScope', b.value->'marketingOptOutScope', 'marketingOptInScope', b.value->'marketingOptInScope'))
                         FROM jsonb_each(p.general_config) AS b WHERE jsonb_typeof(b.value) = 'object')`;

export interface SendSettings {
  locale: string;
  defaultSmsSender: string | null;
  autoCreateContacts: boolean;
  prepaid: boolean;
  /** The organization's funds as Postgres prints numeric; checked exactly in the send's transaction. */
  funds: string;
  shortTrackingDomain: string | null;
  unsubscribeTrackingDomain: string | null;
  /** How far each channel's consent reaches (generalConfig's marketing scopes, ADR 0347). */
  consentScopes: ConsentScopes;
  /** The project has suppressed numbers (ADR 0361): only then does a send look its number up. */
  hasSuppressions: boolean;
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

export interface SenderCountryRows {
  [country: string]: SenderCountryRow | undefined;
}

export interface SendSender extends SenderRow {
  countries: SenderCountryRows;
}

export interface FirstAnswer {
  requestHash: string;
  response: unknown;
}

export interface SendContext extends SendSettings {
  sender: SendSender | null;
  contact: TargetContact | null;
  firstAnswer: FirstAnswer | null;
}

/** A uuid no row has: a sender id that is not a uuid finds nothing. */
const NO_ID = '00000000-0000-0000-0000-000000000000';

/** One request's read: ids already checked to be uuids (or null). */
interface ContextKey {
  projectId: string;
  senderId: string | null;
  target: string | null;
  idempotencyKey: string | null;
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
  /** Its number was suppressed since the request (ADR 0361). */
  suppressed: boolean;
  /** Its audience contact was deleted since the request (no row for the id it resolves to), or the message was redacted (ADR 0358). */
  contactDeleted: boolean;
}

/** A message the recovery sweep looks at; `sendJob` is null for a row stored before ADR 0324. */
export interface StaleSms {
  id: string;
  sendJob: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID.test(value);

/** SQL of the messaging app over its own tables and the tenancy and audience tables it reads. */
@Injectable()
export class SmsRepository {
  /**
   * Group read (ADR 0295): each request's read waits for no timer; reads arriving while others
   * run go together as the next statement, one row per request. Nothing is cached: every read
   * happens after its request arrived, so an opt-out or a price change applies to the next send.
   */
  private readonly contexts = new MicroBatcher<ContextKey, SendContext | null>({
    maxBatch: 200,
    maxInFlight: 2,
    run: async (keys) => {
      // Prepared (ADR 0255): planning it took Postgres 0.7-1.5 ms per request, five times its execution.
      // The arrays go through sub-selects so that no plan sees their length: a custom plan, which
      // knows it, always looked cheaper than the generic one, and Postgres planned every group
      // again (0.5-1 ms); now it keeps the generic plan after five (ADR 0295).
      const rows = await prepared<Omit<SendContext, 'consentScopes'> & { n: string; generalConfig: unknown }>(
        this.ds,
        'send-contexts',
        `SELECT r.n, p.locale, p.default_sms_sender AS "defaultSmsSender", ${SCOPE_FIELDS} AS "generalConfig",
                COALESCE((p.general_config #>> '{channelSms,autoCreateContactsOnOutbounds}')::boolean, false) AS "autoCreateContacts",
                o.prepaid, o.funds::text AS funds, EXISTS (SELECT 1 FROM sms_suppressions x WHERE x.project_id = p.id) AS "hasSuppressions", p.short_tracking_domain AS "shortTrackingDomain", p.unsubscribe_tracking_domain AS "unsubscribeTrackingDomain",
                (SELECT jsonb_build_object('id', s.id, 'alias', s.alias, 'status', s.status,
                        'countries', COALESCE((SELECT jsonb_object_agg(sc.country, jsonb_build_object('accepted', sc.accepted, 'effectiveStatus', sc.effective_status, 'price', sc.price::text))
                                                 FROM sender_countries sc WHERE sc.sender_id = s.id), '{}'::jsonb))
                   FROM senders s WHERE s.project_id = p.id AND s.channel = 'sms' AND s.id::text = COALESCE(r.sender_id, p.default_sms_sender)) AS sender,
                (SELECT jsonb_build_object('id', c.id, 'attributes', c.attributes) FROM audience_contacts c
                  WHERE r.target IS NOT NULL AND c.project_id = p.id
                    AND c.id = COALESCE((SELECT survivor_id FROM audience_aliases WHERE project_id = p.id AND absorbed_id = r.target), r.target)) AS contact,
                (SELECT jsonb_build_object('requestHash', m.request_hash, 'response', m.response) FROM sms_messages m
                  WHERE r.idempotency_key IS NOT NULL AND m.project_id = p.id AND m.idempotency_key = r.idempotency_key) AS "firstAnswer"
           FROM unnest((SELECT $1::uuid[]), (SELECT $2::text[]), (SELECT $3::uuid[]), (SELECT $4::text[])) WITH ORDINALITY AS r(project_id, sender_id, target, idempotency_key, n)
           JOIN projects p ON p.id = r.project_id JOIN organizations o ON o.id = p.organization_id`,
        [keys.map((k) => k.projectId), keys.map((k) => k.senderId), keys.map((k) => k.target), keys.map((k) => k.idempotencyKey)],
      );
      const byPosition = new Map(rows.map(({ n, generalConfig, ...context }): [number, SendContext] => [Number(n), { ...context, consentScopes: consentScopesOf(generalConfig) }]));
      return keys.map((_, i) => ok(byPosition.get(i + 1) ?? null));
    },
  });

  constructor(@Inject(DATA_SOURCE) readonly ds: DataSource) {}

  /**
   * Everything a send reads before its transaction, in one statement (ADR 0201): the
   * project's settings, the sender (`senderId`, or the project default when null) with its
   * countries, the target contact when `target` is an id (absorbed ids resolve to their
   * survivor), and the first answer stored under the Idempotency-Key. Null: no such project.
   * Reads of concurrent requests share that statement (ADR 0295).
   */
  sendContext(projectId: string, senderId: string | null, target: string, idempotencyKey: string | null): Promise<SendContext | null> {
    // The sender is compared as text (`s.id::text`, lower case): a uuid is the same id in any case.
    return this.contexts.submit({ projectId, senderId: senderId !== null && !isUuid(senderId) ? NO_ID : (senderId?.toLowerCase() ?? null), target: isUuid(target) ? target : null, idempotencyKey });
  }

  /**
   * The most recently updated audience contact whose mobile is this E.164 number: by its merge
   * key when `_phone_mobile` merges, else by the merged attribute (the audience app's phone
   * search reads the same two places). One that opted out of SMS comes first: a send to a
   * number is refused when any contact of it opted out (ADR 0343), as in a project that does
   * not merge on the phone a later contact of it stays apart from the one that opted out.
   * `optOutFrom`: the channels whose opt-out reaches SMS under the project's scopes (ADR 0347,
   * `consentSources('sms', scopes).optOut`).
   */
  async contactByPhone(projectId: string, e164: string, optOutFrom: readonly ConsentChannel[]): Promise<TargetContact | null> {
    const [row] = await this.ds.query(
      `WITH ids AS (
         SELECT m.audience_id AS id FROM merge_keys k
           JOIN audience_members m ON m.project_id = k.project_id AND m.data_source_id = k.data_source_id AND m.user_id = k.user_id
          WHERE k.project_id = $1 AND k.attribute = '_phone_mobile' AND k.value = $2
         UNION SELECT c.id FROM audience_contacts c WHERE c.project_id = $1 AND c.attributes->>'_phone_mobile' = $2)
       SELECT c.id, c.attributes FROM audience_contacts c JOIN ids ON ids.id = c.id
        WHERE c.project_id = $1
        ORDER BY EXISTS (SELECT 1 FROM unnest($3::text[]) AS k WHERE c.attributes->>k = 'opt-out') DESC, c.updated_at DESC, c.id DESC LIMIT 1`,
      [projectId, e164, optOutFrom.map(consentAttribute)],
    );
    return row ?? null;
  }

  /** Whether the project suppressed this E.164 number (ADR 0361). */
  async isSuppressed(projectId: string, e164: string): Promise<boolean> {
    const rows = await this.ds.query(`SELECT 1 FROM sms_suppressions WHERE project_id = $1 AND phone = $2`, [projectId, e164]);
    return rows.length > 0;
  }

  async byIdempotencyKey(projectId: string, key: string): Promise<{ requestHash: string; response: unknown } | null> {
    const [row] = await this.ds.query(`SELECT request_hash AS "requestHash", response FROM sms_messages WHERE project_id = $1 AND idempotency_key = $2`, [projectId, key]);
    return row ?? null;
  }

  /**
   * What the worker needs of each message, by id (one statement for the jobs running together,
   * ADR 0201); `optedOut` reads the contact's consent through the project's scopes of now (ADR 0347).
   * The contact is the one the message's id resolves to now: a contact absorbed since the request
   * left its row, and the survivor's consent (an opt-out wins the merge, ADR 0048) is the one to obey.
   * A message sent to a contact whose row is gone (deleted since, ADR 0358) has no consent to read
   * and no one to go to: `contactDeleted`. A message without a contact (auto-created, not merged
   * yet when it was stored, ADR 0184) is not.
   */
  async forSubmit(smsIds: readonly string[]): Promise<Map<string, SubmitRow>> {
    const rows = await prepared<Omit<SubmitRow, 'optedOut'> & { attributes: Record<string, unknown> | null; generalConfig: unknown }>(
      this.ds,
      'for-submit',
      `SELECT m.id, m.status, s.alias AS source, m.destination, m.text, m.encoding, m.messages_count AS "messagesCount", c.attributes, ${SCOPE_FIELDS} AS "generalConfig",
              (m.redacted_at IS NOT NULL OR (m.audience_id IS NOT NULL AND c.id IS NULL)) AS "contactDeleted",
              EXISTS (SELECT 1 FROM sms_suppressions x WHERE x.project_id = m.project_id AND x.phone = m.destination) AS suppressed
         FROM sms_messages m JOIN senders s ON s.id = m.sender_id JOIN projects p ON p.id = m.project_id
         LEFT JOIN audience_contacts c ON c.project_id = m.project_id
               AND c.id = ${CURRENT_AUDIENCE_ID}
        WHERE m.id = ANY($1::uuid[])`,
      [smsIds],
    );
    return new Map(
      rows.map(({ attributes, generalConfig, ...rest }) => {
        const optedOut = attributes !== null && effectiveConsent(attributes, 'sms', consentScopesOf(generalConfig)) === 'opt-out';
        return [rest.id, { ...rest, optedOut }];
      }),
    );
  }

  /**
   * Messages left `enqueued` longer than `olderThanMs`, oldest first, with the send job that holds
   * them (ADR 0324); read through the partial index of messages not yet handed to the SMSC, whose
   * predicate the WHERE repeats (ADR 0325).
   */
  async staleEnqueued(olderThanMs: number, limit = 500): Promise<StaleSms[]> {
    return this.ds.query(
      `SELECT id, send_job AS "sendJob" FROM sms_messages
        WHERE smsc_message_id IS NULL AND error IS NULL AND status = 'enqueued' AND created_at < now() - make_interval(secs => $1)
        ORDER BY created_at LIMIT $2`,
      [olderThanMs / 1000, limit],
    );
  }
}
