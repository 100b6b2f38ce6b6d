import { DATA_SOURCE, OrganizationEntity, ProjectEntity } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';

@Injectable()
export class ProjectRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  /** The project of one organization: a row of another tenant is never returned. */
  findProject(organizationId: string, projectId: string): Promise<ProjectEntity | null> {
    return this.ds.getRepository(ProjectEntity).findOneBy({ id: projectId, organizationId });
  }

  findOrganization(organizationId: string): Promise<OrganizationEntity | null> {
    return this.ds.getRepository(OrganizationEntity).findOneBy({ id: organizationId });
  }
}
