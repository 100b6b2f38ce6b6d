import { DATA_SOURCE, isUuid, OrganizationEntity, ProjectEntity } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';

@Injectable()
export class OrganizationsRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  create(values: Partial<OrganizationEntity>): Promise<OrganizationEntity> {
    const repo = this.ds.getRepository(OrganizationEntity);
    return repo.save(repo.create(values));
  }

  findById(organizationId: string): Promise<OrganizationEntity | null> {
    if (!isUuid(organizationId)) return Promise.resolve(null);
    return this.ds.getRepository(OrganizationEntity).findOneBy({ id: organizationId });
  }

  async update(organizationId: string, patch: Partial<OrganizationEntity>): Promise<OrganizationEntity> {
    const repo = this.ds.getRepository(OrganizationEntity);
    if (Object.keys(patch).length) await repo.update({ id: organizationId }, patch);
    return repo.findOneByOrFail({ id: organizationId });
  }

  listProjects(organizationId: string): Promise<ProjectEntity[]> {
    return this.ds.getRepository(ProjectEntity).find({ where: { organizationId }, order: { createdAt: 'ASC', uid: 'ASC' } });
  }
}
