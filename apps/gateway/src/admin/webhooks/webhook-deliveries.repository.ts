import { DATA_SOURCE, isUuid } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface DeliveryRow {
  seq: string;
  id: string;
  smsId: string;
  projectId: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: Date;
  deliveredAt: Date | null;
  createdAt: Date;
  body: string;
}

const COLUMNS = `seq::text, id, sms_id AS "smsId", project_id AS "projectId", status, attempts, last_status_code AS "lastStatusCode", last_error AS "lastError",
  next_attempt_at AS "nextAttemptAt", delivered_at AS "deliveredAt", created_at AS "createdAt", body`;

/** The messaging app's webhook deliveries as the operator sees and re-sends them (migration 1795269610000, ADR 0155). */
@Injectable()
export class WebhookDeliveriesRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  /**
   * Newest first; `beforeSeq` continues a page. The order names the table's column: a bare `seq` is
   * the output column `seq::text`, sorted as text ('9' after '10'), which misordered the list and
   * made a page's cursor skip rows wherever an organization's deliveries straddle a power of ten.
   */
  list(organizationId: string, filter: { status?: DeliveryStatus; beforeSeq?: string; limit: number }): Promise<DeliveryRow[]> {
    return this.ds.query(
      `SELECT ${COLUMNS} FROM webhook_deliveries
        WHERE organization_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::bigint IS NULL OR seq < $3)
        ORDER BY webhook_deliveries.seq DESC LIMIT $4`,
      [organizationId, filter.status ?? null, filter.beforeSeq ?? null, filter.limit],
    );
  }

  find(organizationId: string, id: string): Promise<DeliveryRow | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return this.ds.query(`SELECT ${COLUMNS} FROM webhook_deliveries WHERE organization_id = $1 AND id = $2`, [organizationId, id]).then((rows: DeliveryRow[]) => rows[0] ?? null);
  }

  /**
   * Sends a delivery again (failed, or delivered and lost by the receiver) with a fresh retry
   * window; messaging's pump picks it up within seconds. Null when it is already pending.
   */
  async retry(organizationId: string, id: string): Promise<DeliveryRow | null> {
    if (!isUuid(id)) return null;
    const [rows] = await this.ds.query(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), retry_from = now(), locked_until = NULL, updated_at = now()
        WHERE organization_id = $1 AND id = $2 AND status <> 'pending' RETURNING ${COLUMNS}`,
      [organizationId, id],
    );
    return rows[0] ?? null;
  }
}
