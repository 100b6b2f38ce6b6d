import { randomUUID } from 'node:crypto';
import { type ConsentStatus, Outputs } from '@meld/contracts';
import { DATA_SOURCE, MESSAGING_SOURCE, type SourceRef, messagingDataSourceId, messagingSourceOf, outboxTrace, upsertSourceContacts } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import { outboxRow } from '../outbox/outbox-row';
import { ContactsOutboxRelay } from './contacts-outbox-relay';

/** Timeline events of this app (coordinated with the other `_sms_*` events by name only). */
export type MessagingEvent = '_sms_click' | '_sms_unsubscribe';

export type { SourceRef };

/**
 * What the messaging app writes about contacts goes the way ingest writes (ADR 0181): a
 * source contact of the project's `meld-messaging` data source plus `outbox` rows, in the
 * caller's transaction, so identity-merge stays the one writer of audience contacts and
 * consent survivorship (an opt-out wins, ADR 0048) applies to an unsubscribe as to any source.
 * For an existing audience contact, the source contact takes the `_user_id` of one of its
 * members: `_user_id` is a merge key, so it joins that contact whatever the project merges on;
 * when every member's is junk (ADR 0024), it links to one instead (`@member:<ref>`, ADR 0362).
 */
@Injectable()
export class MessagingContacts {
  constructor(
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    private readonly outbox: ContactsOutboxRelay,
  ) {}

  transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    return this.ds.transaction(work);
  }

  /** Rows were committed by a caller's transaction: publish them now. */
  committed(): void {
    this.outbox.nudge();
  }

  dataSourceId(em: EntityManager, projectId: string): Promise<string> {
    return messagingDataSourceId(em, projectId);
  }

  /** The source contact standing for an audience contact: ours if merged into it already, else a member's `_user_id`, or a link to a junk-id member (ADR 0362); null without members. */
  sourceOf(em: EntityManager, projectId: string, audienceId: string): Promise<SourceRef | null> {
    return messagingSourceOf(em, projectId, audienceId);
  }

  /**
   * Records `_consent_sms` on the source contact (also creates it); an opt-in lifts only our own
   * opt-out (ADR 0048). A direct write, stamped with Postgres' clock under the row lock (ADR 0349):
   * a STOP then a START taken by two replicas apply in that order whatever their clocks.
   */
  async recordConsent(em: EntityManager, projectId: string, source: SourceRef, status: Exclude<ConsentStatus, null>): Promise<void> {
    await upsertSourceContacts(em, projectId, source.dataSourceId, [{ userId: source.userId, patch: { _consent_sms: status } }]);
  }

  /**
   * A new contact for a phone nobody has (outbound auto-creation, ADR 0184; an inbound message,
   * ADR 0343): `_user_id` and `_phone_mobile` are the E.164 number, with the consent the number
   * stated if any. Writing it again for the same number updates the same source contact. A
   * direct write, as recordConsent's (ADR 0349).
   */
  async createForPhone(em: EntityManager, projectId: string, e164: string, { consent = null }: { consent?: ConsentStatus } = {}): Promise<SourceRef> {
    const source = { dataSourceId: await this.dataSourceId(em, projectId), userId: e164 };
    await upsertSourceContacts(em, projectId, source.dataSourceId, [{ userId: e164, patch: { _phone_mobile: e164, ...(consent ? { _consent_sms: consent } : {}) } }]);
    return source;
  }

  /**
   * Our own contact of a number, the one createForPhone writes, with its attributes; null when
   * there is none (or it was deleted). It stands for the number while identity-merge has not
   * merged it yet (ADR 0343). In the caller's transaction when `em` is given.
   */
  async ofPhone(projectId: string, e164: string, em?: EntityManager): Promise<{ source: SourceRef; attributes: Record<string, unknown> } | null> {
    const [row] = await (em ?? this.ds).query(
      `SELECT s.data_source_id AS "dataSourceId", s.attributes FROM source_contacts s JOIN data_sources d ON d.id = s.data_source_id
        WHERE d.project_id = $1 AND d.uid = $2 AND s.project_id = $1 AND s.user_id = $3 AND s.deleted_at IS NULL AND s.version > 0`,
      [projectId, MESSAGING_SOURCE.uid, e164],
    );
    return row ? { source: { dataSourceId: row.dataSourceId, userId: e164 }, attributes: row.attributes ?? {} } : null;
  }

  /** Puts an event on the contact's timeline (`meld.events.v1`), creating the source contact if it is new. */
  async event(em: EntityManager, projectId: string, source: SourceRef, eventType: MessagingEvent, parameters: Record<string, unknown>, at = new Date().toISOString()): Promise<void> {
    await upsertSourceContacts(em, projectId, source.dataSourceId, [{ userId: source.userId, patch: {} }]);
    const row = outboxRow(Outputs.events, {
      schemaVersion: 1,
      projectId,
      dataSourceId: source.dataSourceId,
      userId: source.userId,
      eventId: randomUUID(),
      eventType,
      eventDate: at,
      receivedAt: at,
      parameters,
    });
    await em.query(`INSERT INTO outbox (topic, key, value, trace) VALUES ($1, $2, $3, $4)`, [row.topic, row.key, JSON.stringify(row.value), outboxTrace()]);
  }

  /** The audience contact a source contact merged into, once identity-merge applied it. */
  async audienceOf(projectId: string, source: SourceRef): Promise<string | null> {
    const [row] = await this.ds.query(`SELECT audience_id FROM audience_members WHERE project_id = $1 AND data_source_id = $2 AND user_id = $3`, [projectId, source.dataSourceId, source.userId]);
    return row?.audience_id ?? null;
  }
}
