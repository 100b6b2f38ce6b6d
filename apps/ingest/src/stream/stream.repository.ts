import { DATA_SOURCE, DataSourceEntity, OrganizationEntity, ProjectEntity, isUuid } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';

@Injectable()
export class StreamRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  /** A data source of this project only: another project's id is a miss, like an unknown one. */
  findDataSource(projectId: string, dataSourceId: string): Promise<DataSourceEntity | null> {
    if (!isUuid(dataSourceId)) return Promise.resolve(null);
    return this.ds.getRepository(DataSourceEntity).findOneBy({ id: dataSourceId, projectId });
  }

  findProject(organizationId: string, projectId: string): Promise<ProjectEntity | null> {
    return this.ds.getRepository(ProjectEntity).findOneBy({ id: projectId, organizationId });
  }

  findOrganization(organizationId: string): Promise<OrganizationEntity | null> {
    return this.ds.getRepository(OrganizationEntity).findOneBy({ id: organizationId });
  }
}
