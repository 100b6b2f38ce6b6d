import { listPage } from '@meld/api';
import { DATA_SOURCE } from '@meld/db';
import type { ListQuery } from '@meld/filters';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { SENDER_FIELDS } from './sender-fields';
import type { SenderCountryRow, SenderRow } from './sender.schema';

@Injectable()
export class SendersRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  list(projectId: string, channel: 'sms' | 'rcs', query: ListQuery) {
    return listPage<SenderRow>(
      this.ds,
      {
        columns: `s.id, s.channel, s.alias, s.name, s.status, s.created_at AS "createdAt"`,
        from: 'senders s',
        scope: 's.project_id = $1 AND s.channel = $2',
        scopeParams: [projectId, channel],
      },
      query,
      SENDER_FIELDS,
    );
  }

  /** Every country row of these senders, by country. */
  async countries(senderIds: string[]): Promise<Map<string, SenderCountryRow[]>> {
    const byId = new Map<string, SenderCountryRow[]>(senderIds.map((id) => [id, []]));
    if (senderIds.length === 0) return byId;
    const rows: SenderCountryRow[] = await this.ds.query(
      `SELECT sender_id AS "senderId", country, accepted, effective_status AS "effectiveStatus", price::text AS price
         FROM sender_countries WHERE sender_id = ANY($1::uuid[]) ORDER BY country`,
      [senderIds],
    );
    for (const r of rows) byId.get(r.senderId)?.push(r);
    return byId;
  }
}
