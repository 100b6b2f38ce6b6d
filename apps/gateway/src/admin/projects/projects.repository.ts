import { AttributeEntity, DATA_SOURCE, ProjectEntity, SenderEntity, isUuid } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';

type NewAttribute = Omit<AttributeEntity, 'id' | 'projectId' | 'createdAt' | 'slot'>;

@Injectable()
export class ProjectsRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  findByUid(uid: string): Promise<ProjectEntity | null> {
    return this.ds.getRepository(ProjectEntity).findOneBy({ uid });
  }

  async uidTaken(uid: string): Promise<boolean> {
    return this.ds.getRepository(ProjectEntity).existsBy({ uid });
  }

  listByOrganization(organizationId: string): Promise<ProjectEntity[]> {
    return this.ds.getRepository(ProjectEntity).find({ where: { organizationId }, order: { createdAt: 'ASC', uid: 'ASC' } });
  }

  /** The project and its catalogue seed in one transaction: a project never exists without its reserved attributes. */
  create(values: Partial<ProjectEntity>, attributes: NewAttribute[]): Promise<ProjectEntity> {
    return this.ds.transaction(async (em) => {
      const { id } = await em.save(em.create(ProjectEntity, values));
      if (attributes.length) await em.insert(AttributeEntity, attributes.map((a) => ({ ...a, projectId: id })));
      return em.findOneByOrFail(ProjectEntity, { id });
    });
  }

  async update(projectId: string, patch: Partial<ProjectEntity>): Promise<ProjectEntity> {
    const repo = this.ds.getRepository(ProjectEntity);
    // TypeORM's deep-partial type cannot see that a jsonb column takes a plain object.
    if (Object.keys(patch).length) await repo.update({ id: projectId }, patch as Parameters<typeof repo.update>[1]);
    return repo.findOneByOrFail({ id: projectId });
  }

  async hasSmsSender(projectId: string, senderId: string): Promise<boolean> {
    return isUuid(senderId) && this.ds.getRepository(SenderEntity).existsBy({ projectId, id: senderId, channel: 'sms' });
  }
}
