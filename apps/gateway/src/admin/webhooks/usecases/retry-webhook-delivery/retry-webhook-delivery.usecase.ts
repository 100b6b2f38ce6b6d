import { ConflictException, Injectable } from '@nestjs/common';
import { OrganizationsRepository } from '../../../organizations/organizations.repository';
import { found } from '../../../shared/found';
import { WebhookDeliveriesRepository } from '../../webhook-deliveries.repository';
import { toDeliveryResource } from '../list-webhook-deliveries/list-webhook-deliveries.usecase';

/** Queues a failed (or delivered) delivery again, with a fresh 24 h retry window (ADR 0155). */
@Injectable()
export class RetryWebhookDelivery {
  constructor(
    private readonly organizations: OrganizationsRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
  ) {}

  async execute({ organizationId, deliveryId }: { organizationId: string; deliveryId: string }) {
    const organization = found(await this.organizations.findById(organizationId), 'organization', organizationId);
    const retried = await this.deliveries.retry(organization.id, deliveryId);
    if (retried) return { entity: toDeliveryResource(retried) };
    found(await this.deliveries.find(organization.id, deliveryId), 'webhook delivery', deliveryId);
    throw new ConflictException(`webhook delivery "${deliveryId}" is already pending`);
  }
}
