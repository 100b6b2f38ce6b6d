import { toProjectResource } from '@meld/api';
import { Injectable } from '@nestjs/common';
import { OrganizationsRepository } from '../../../organizations/organizations.repository';
import { found } from '../../../shared/found';
import { ProjectsRepository } from '../../projects.repository';

export interface ListProjectsCommand {
  organizationId: string;
}

@Injectable()
export class ListProjects {
  constructor(
    private readonly organizations: OrganizationsRepository,
    private readonly projects: ProjectsRepository,
  ) {}

  async execute({ organizationId }: ListProjectsCommand) {
    const organization = found(await this.organizations.findById(organizationId), 'organization', organizationId);
    const projects = await this.projects.listByOrganization(organization.id);
    return { entity: projects.map(toProjectResource), metadata: { count: projects.length } };
  }
}
