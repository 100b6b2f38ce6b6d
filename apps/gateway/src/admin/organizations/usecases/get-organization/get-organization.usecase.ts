import { toOrganizationResource } from '@meld/api';
import { Injectable } from '@nestjs/common';
import { found } from '../../../shared/found';
import { OrganizationsRepository } from '../../organizations.repository';

export interface GetOrganizationCommand {
  organizationId: string;
}

/** The organization and a summary of its projects: what an operator checks first. */
@Injectable()
export class GetOrganization {
  constructor(private readonly organizations: OrganizationsRepository) {}

  async execute({ organizationId }: GetOrganizationCommand) {
    const organization = found(await this.organizations.findById(organizationId), 'organization', organizationId);
    const projects = await this.organizations.listProjects(organization.id);
    return {
      entity: toOrganizationResource(organization),
      metadata: { projects: projects.map((p) => ({ id: p.id, uid: p.uid, name: p.name })) },
    };
  }
}
