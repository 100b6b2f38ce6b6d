import { toOrganizationResource } from '@meld/api';
import { Injectable } from '@nestjs/common';
import { OrganizationsRepository } from '../../organizations.repository';
import type { CreateOrganizationCommand } from './create-organization.command';

@Injectable()
export class CreateOrganization {
  constructor(private readonly organizations: OrganizationsRepository) {}

  async execute(command: CreateOrganizationCommand) {
    const organization = await this.organizations.create(command);
    return { entity: toOrganizationResource(organization) };
  }
}
