import { DATA_SOURCE, MESSAGING_SOURCE } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';

/** An audience contact identity-merge deleted (its `tombstone` on `meld.audience.v1`). */
export interface DeletedContact {
  projectId: string;
  audienceId: string;
  /** Its members, `<dataSourceId>/<userId>` (the tombstone's `removedDsContactIds`). */
  members: readonly string[];
}

/**
 * `maskPhone` (libs/auth, ADR 0121) of an E.164 destination, in SQL: `+33******78`, the form
 * tokens without PII already see, so a redacted message reads alike for every token and masking it
 * again on read changes nothing.
 */
const MASKED_DESTINATION = `CASE WHEN length(m.destination) >= 9 THEN left(m.destination, 3) || '******' || right(m.destination, 2) ELSE '******' END`;

/** What redaction writes on a message (`m`), and the short links of the messages a `redacted` CTE returns. */
const REDACTED = `destination = ${MASKED_DESTINATION}, text = NULL, request_hash = NULL, redacted_at = now()`;
const LINKS = `links AS (UPDATE sms_links l SET url = NULL FROM redacted WHERE l.sms_id = redacted.id AND l.url IS NOT NULL)`;

/**
 * Redacts the SMS of deleted audience contacts (ADR 0358): every message whose current contact
 * is one of them (sent to it, or to an id it absorbed: ADR 0051's aliases resolve in one hop)
 * keeps its counts, price, status, dates, sender and ids, loses its text (NULL), its number
 * (masked) and its request fingerprint (a hash of number and text); its short links lose their
 * target. One statement for the batch. A message stored before its auto-created contact was
 * merged has no audience id: its contact is the `meld-messaging` source contact of its number
 * (ADRs 0181, 0184), so it goes with the deleted contact that had that member.
 *
 * A tombstone also ends an id identity-merge absorbed into another (its alias then exists,
 * written in the same step): that contact lives on, so nothing is redacted for it. An id whose
 * audience row exists again is not deleted either. A message already redacted is left alone, so
 * a replayed tombstone writes nothing.
 */
@Injectable()
export class SmsRedaction {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  /** Answers how many messages were redacted. */
  async redact(contacts: readonly DeletedContact[]): Promise<number> {
    if (!contacts.length) return 0;
    const [{ n }] = await this.ds.query(
      `WITH deleted AS (
         SELECT DISTINCT t.project_id, t.audience_id FROM unnest($1::uuid[], $2::uuid[]) AS t(project_id, audience_id)
          WHERE NOT EXISTS (SELECT 1 FROM audience_aliases al WHERE al.project_id = t.project_id AND al.absorbed_id = t.audience_id)
            AND NOT EXISTS (SELECT 1 FROM audience_contacts c WHERE c.project_id = t.project_id AND c.id = t.audience_id)),
       ids AS (
         SELECT project_id, audience_id FROM deleted
         UNION SELECT al.project_id, al.absorbed_id FROM audience_aliases al JOIN deleted d ON al.project_id = d.project_id AND al.survivor_id = d.audience_id),
       numbers AS (
         SELECT r.project_id, substr(r.ref, strpos(r.ref, '/') + 1) AS destination
           FROM unnest($3::uuid[], $4::uuid[], $5::text[]) AS r(project_id, audience_id, ref)
           JOIN deleted d ON d.project_id = r.project_id AND d.audience_id = r.audience_id
           JOIN data_sources ds ON ds.project_id = r.project_id AND ds.uid = '${MESSAGING_SOURCE.uid}' AND ds.id::text = split_part(r.ref, '/', 1)),
       targets AS (
         SELECT m.id FROM sms_messages m JOIN ids ON m.project_id = ids.project_id AND m.audience_id = ids.audience_id
         UNION SELECT m.id FROM sms_messages m JOIN numbers ON m.project_id = numbers.project_id AND m.audience_id IS NULL AND m.destination = numbers.destination),
       redacted AS (
         UPDATE sms_messages m SET ${REDACTED} FROM targets WHERE m.id = targets.id AND m.redacted_at IS NULL
         RETURNING m.id),
       ${LINKS}
       SELECT count(*)::int AS n FROM redacted`,
      [
        contacts.map((c) => c.projectId),
        contacts.map((c) => c.audienceId),
        ...membersOf(contacts),
      ],
    );
    return n as number;
  }

  /**
   * Redacts messages by id: those the send worker finds without their contact (deleted since the
   * request). A message stored while its contact was being deleted, after the tombstone's
   * redaction ran, is redacted there.
   */
  async redactMessages(ids: readonly string[]): Promise<void> {
    if (!ids.length) return;
    await this.ds.query(`WITH redacted AS (UPDATE sms_messages m SET ${REDACTED} WHERE m.id = ANY($1::uuid[]) AND m.redacted_at IS NULL RETURNING m.id), ${LINKS} SELECT 1`, [ids]);
  }
}

/** The members of the contacts as three parallel arrays (project, audience id, member). */
function membersOf(contacts: readonly DeletedContact[]): [string[], string[], string[]] {
  const columns: [string[], string[], string[]] = [[], [], []];
  for (const c of contacts) {
    for (const ref of c.members) {
      columns[0].push(c.projectId);
      columns[1].push(c.audienceId);
      columns[2].push(ref);
    }
  }
  return columns;
}
