import { isoWithOffset, timestamp } from '@meld/api';
import { parseInput } from '@meld/platform';
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { OrganizationsRepository } from '../../../organizations/organizations.repository';
import { found } from '../../../shared/found';
import { type DeliveryRow, WebhookDeliveriesRepository } from '../../webhook-deliveries.repository';

export const WebhookDeliverySchema = z
  .object({
    id: z.string().describe('the event id: the `webhook-id` header receivers de-duplicate on'),
    smsId: z.string(),
    projectId: z.string(),
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.int(),
    lastStatusCode: z.int().nullable().describe("the receiver's last HTTP status; null when it gave none (refused, timed out)"),
    lastError: z.string().nullable(),
    nextAttemptAt: timestamp().nullable().describe('when pending: the next attempt'),
    deliveredAt: timestamp().nullable(),
    createdAt: timestamp(),
    payload: z.record(z.string(), z.unknown()).describe('the JSON body sent'),
  })
  .meta({ id: 'WebhookDelivery' });

const CURSOR = /^[1-9][0-9]{0,18}$/;
const BIGINT_MAX = 2n ** 63n - 1n;

export const ListWebhookDeliveriesQuery = z.strictObject({
  status: z.enum(['pending', 'delivered', 'failed']).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  // `seq` is a bigint: a larger number would be Postgres' 22003, a 500, not the caller's 400.
  cursor: z
    .string()
    .regex(CURSOR, 'must be the nextCursor of a previous page')
    .refine((c) => !CURSOR.test(c) || BigInt(c) <= BIGINT_MAX, 'must be the nextCursor of a previous page')
    .optional(),
});

export const toDeliveryResource = (d: DeliveryRow): z.infer<typeof WebhookDeliverySchema> => ({
  id: d.id,
  smsId: d.smsId,
  projectId: d.projectId,
  status: d.status,
  attempts: d.attempts,
  lastStatusCode: d.lastStatusCode,
  lastError: d.lastError,
  nextAttemptAt: d.status === 'pending' ? isoWithOffset(d.nextAttemptAt) : null,
  deliveredAt: d.deliveredAt ? isoWithOffset(d.deliveredAt) : null,
  createdAt: isoWithOffset(d.createdAt),
  payload: JSON.parse(d.body),
});

/** The organization's delivery-report webhook deliveries, newest first, by status (ADR 0155). */
@Injectable()
export class ListWebhookDeliveries {
  constructor(
    private readonly organizations: OrganizationsRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
  ) {}

  async execute({ organizationId, query }: { organizationId: string; query: unknown }) {
    const { status, limit, cursor } = parseInput(ListWebhookDeliveriesQuery, query, 'query');
    const organization = found(await this.organizations.findById(organizationId), 'organization', organizationId);
    const rows = await this.deliveries.list(organization.id, { status, limit, beforeSeq: cursor });
    return { entity: rows.map(toDeliveryResource), metadata: { count: rows.length, nextCursor: rows.length === limit ? rows.at(-1)!.seq : null } };
  }
}
