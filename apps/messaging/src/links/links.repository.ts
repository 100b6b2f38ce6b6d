import { DATA_SOURCE } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import type { WriteStatement } from '../batching/write-statement';
import type { TemplateLink } from './text-template';

/** A link with what the pages and the timeline need of its message. */
export interface LinkRow {
  code: string;
  projectId: string;
  smsId: string;
  url: string | null;
  audienceId: string | null;
  destination: string;
  senderName: string;
  confirmedAt: Date | null;
}

const LINK_COLUMNS = `l.code, l.project_id AS "projectId", l.sms_id AS "smsId", l.url, m.audience_id AS "audienceId", m.destination,
  s.name AS "senderName", l.confirmed_at AS "confirmedAt"`;

/** SQL of `sms_links` (ADR 0182). */
@Injectable()
export class LinksRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  /** Stores the links of new messages in their send transaction (after the message rows). */
  /** A part of the send batch's write (ADR 0254): the messages' links. */
  insert(write: WriteStatement, messages: ReadonlyArray<{ projectId: string; smsId: string; links: readonly TemplateLink[] }>): void {
    const rows = messages.flatMap(({ projectId, smsId, links }) => links.map((l) => ({ ...l, projectId, smsId })));
    if (!rows.length) return;
    write.add(
      `INSERT INTO sms_links (code, kind, project_id, sms_id, url)
       SELECT l.code, l.kind, l."projectId", l."smsId", l.url FROM jsonb_to_recordset(${write.param(JSON.stringify(rows))}::jsonb) AS l(code text, kind text, "projectId" uuid, "smsId" uuid, url text)`,
    );
  }

  /**
   * A link by its code; null for an unknown one and for a link of a redacted message (ADR 0358):
   * its target and its number are forgotten, so there is nothing to redirect to and no number to
   * opt out (an unsubscribe would otherwise record an opt-out on the masked number).
   */
  async find(code: string, kind: TemplateLink['kind'], em: EntityManager | DataSource = this.ds): Promise<LinkRow | null> {
    const [row] = await em.query(
      `SELECT ${LINK_COLUMNS} FROM sms_links l JOIN sms_messages m ON m.id = l.sms_id JOIN senders s ON s.id = m.sender_id
        WHERE l.code = $1 AND l.kind = $2 AND m.redacted_at IS NULL ${em === this.ds ? '' : 'FOR UPDATE OF l'}`,
      [code, kind],
    );
    return row ?? null;
  }

  async countClick(em: EntityManager, code: string): Promise<void> {
    await em.query(`UPDATE sms_links SET clicks = clicks + 1 WHERE code = $1`, [code]);
  }

  async confirm(em: EntityManager, code: string): Promise<void> {
    await em.query(`UPDATE sms_links SET confirmed_at = now() WHERE code = $1`, [code]);
  }
}
