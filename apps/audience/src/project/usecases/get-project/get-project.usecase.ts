import { toOrganizationSummary, toProjectResource, uniqueAttributesOf } from '@meld/api';
import { Injectable, NotFoundException } from '@nestjs/common';
import type { ProjectRead } from '../../project-read.schema';
import { ProjectRepository } from '../../project.repository';
import type { GetProjectCommand } from './get-project.command';

/** The project read. Funds are account details: shown only with ACCOUNT_READ (spec, Scopes). */
@Injectable()
export class GetProject {
  constructor(private readonly projects: ProjectRepository) {}

  async execute({ organizationId, projectId, scopes }: GetProjectCommand): Promise<ProjectRead> {
    const found = await this.projects.findProjectWithOrganization(organizationId, projectId);
    if (!found) throw new NotFoundException('project not found');
    const { project, organization } = found;
    return {
      entity: toProjectResource(project),
      metadata: {
        uniqueAttributes: uniqueAttributesOf(project),
        organization: toOrganizationSummary(organization, scopes.includes('ACCOUNT_READ')),
        scopes,
      },
    };
  }
}
