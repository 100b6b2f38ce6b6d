import { TENANCY_CHANGED_CHANNEL } from '@meld/auth';
import { toOrganizationResource } from '@meld/api';
import { Injectable } from '@nestjs/common';
import { TenancyEvents } from '../../../shared/tenancy-events';
import { found } from '../../../shared/found';
import { OrganizationsRepository } from '../../organizations.repository';
import type { UpdateOrganizationCommand } from './update-organization.command';

@Injectable()
export class UpdateOrganization {
  constructor(
    private readonly organizations: OrganizationsRepository,
    private readonly events: TenancyEvents,
  ) {}

  async execute({ organizationId, ...patch }: UpdateOrganizationCommand) {
    found(await this.organizations.findById(organizationId), 'organization', organizationId);
    const organization = await this.organizations.update(organizationId, patch);
    // Plan and data mode are cached by the gateways with every token: tell them.
    if (patch.plan !== undefined || patch.dataMode !== undefined) await this.events.publish(TENANCY_CHANGED_CHANNEL, organization.id);
    return { entity: toOrganizationResource(organization) };
  }
}
