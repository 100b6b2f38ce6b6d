import { DATA_SOURCE, OrganizationEntity, ProjectEntity } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { poolRead } from '../shared/pool-read';
import { EntityColumns } from './entity-row';

@Injectable()
export class ProjectRepository {
  private compiled?: { sql: string; project: EntityColumns<ProjectEntity>; organization: EntityColumns<OrganizationEntity> };

  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  /** The project of one organization with that organization: a row of another tenant is never returned. */
  async findProjectWithOrganization(organizationId: string, projectId: string): Promise<{ project: ProjectEntity; organization: OrganizationEntity } | null> {
    const { sql, project, organization } = this.query();
    const [row] = await poolRead<Record<string, unknown>>(this.ds, sql, [projectId, organizationId]);
    return row ? { project: project.read(row), organization: organization.read(row) } : null;
  }

  /** One round trip for the read's two rows, its SQL built on first use (the metadata exists once the DataSource is initialized; ADR 0209). */
  private query() {
    if (!this.compiled) {
      const project = new EntityColumns(this.ds, ProjectEntity, 'p');
      const organization = new EntityColumns(this.ds, OrganizationEntity, 'o');
      const sql = `SELECT ${project.columns}, ${organization.columns} FROM projects p JOIN organizations o ON o.id = p.organization_id WHERE p.id = $1 AND p.organization_id = $2`;
      this.compiled = { sql, project, organization };
    }
    return this.compiled;
  }
}
