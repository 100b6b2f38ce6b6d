import { ApiPostgresUnavailable, ApiQuery, ApiTags, entityOnly, envelope } from '@meld/api';
import { Controller, Get, Param, Post, Query, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { AdminOperation } from '../http/admin-docs';
import { AdminTokenGuard } from '../http/admin-token.guard';
import { ListWebhookDeliveries, WebhookDeliverySchema } from './usecases/list-webhook-deliveries/list-webhook-deliveries.usecase';
import { RetryWebhookDelivery } from './usecases/retry-webhook-delivery/retry-webhook-delivery.usecase';

@ApiTags('admin')
@UseGuards(AdminTokenGuard)
@ApiPostgresUnavailable()
@Controller('admin/v1/organizations/:org/webhook-deliveries')
export class WebhookDeliveriesController {
  constructor(
    private readonly listDeliveries: ListWebhookDeliveries,
    private readonly retryDelivery: RetryWebhookDelivery,
  ) {}

  @Get()
  @ApiQuery({ name: 'status', required: false, enum: ['pending', 'delivered', 'failed'] })
  @ApiQuery({ name: 'limit', required: false, description: '1–200, default 50' })
  @ApiQuery({ name: 'cursor', required: false, description: 'metadata.nextCursor of the previous page' })
  @AdminOperation('List the delivery-report webhook deliveries of the organization, newest first', 200, envelope(z.array(WebhookDeliverySchema), z.object({ count: z.int(), nextCursor: z.string().nullable() })), [400, 404])
  list(@Param('org') organizationId: string, @Query() query: Record<string, unknown>) {
    return this.listDeliveries.execute({ organizationId, query });
  }

  @Post(':deliveryId/retry')
  @AdminOperation('Send a failed (or delivered) webhook delivery again, with a fresh 24 h retry window', 202, entityOnly(WebhookDeliverySchema), [404, 409])
  retry(@Param('org') organizationId: string, @Param('deliveryId') deliveryId: string) {
    return this.retryDelivery.execute({ organizationId, deliveryId });
  }
}
