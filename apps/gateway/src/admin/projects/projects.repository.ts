import { AttributeEntity, DATA_SOURCE, ProjectEntity, SenderEntity, isUuid } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { RemergeState } from './admin-project.view';

type NewAttribute = Omit<AttributeEntity, 'id' | 'projectId' | 'createdAt' | 'slot'>;

/** Column values to write, and whether the contacts must be merged again (ADR 0331). */
export interface ProjectChange {
  patch: Partial<ProjectEntity>;
  remerge: boolean;
}

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

  /** The patch, and with `remerge` a request to merge the contacts again: see `change`. */
  update(projectId: string, patch: Partial<ProjectEntity>, { remerge = false } = {}): Promise<ProjectEntity> {
    return this.change(projectId, () => ({ patch, remerge }));
  }

  /**
   * The change `compute` makes of the project's row, and with `remerge` a request that
   * identity-merge merge the project's contacts again (ADR 0331), in one transaction: merging
   * attributes never change without it. A newer request replaces one in progress, which then
   * starts over. The row is locked before `compute` sees it, so a partial config is merged over
   * the row as it is when written: merged over one read before a concurrent PATCH committed, it
   * wrote that PATCH's blocks back as they were (ADR 0014).
   */
  change(projectId: string, compute: (current: ProjectEntity) => ProjectChange): Promise<ProjectEntity> {
    return this.ds.transaction(async (em) => {
      const current = await em.findOneOrFail(ProjectEntity, { where: { id: projectId }, lock: { mode: 'pessimistic_write' } });
      const { patch, remerge } = compute(current);
      // TypeORM's deep-partial type cannot see that a jsonb column takes a plain object.
      if (Object.keys(patch).length) await em.update(ProjectEntity, { id: projectId }, patch as Parameters<typeof em.update>[2]);
      if (remerge) {
        await em.query(
          `INSERT INTO remerge_requests (project_id, requested_at) VALUES ($1, clock_timestamp())
           ON CONFLICT (project_id) DO UPDATE SET requested_at = EXCLUDED.requested_at, cursor_data_source_id = NULL, cursor_user_id = NULL,
                                                  contacts_done = 0, lease_until = NULL, done_at = NULL`,
          [projectId],
        );
      }
      return em.findOneByOrFail(ProjectEntity, { id: projectId });
    });
  }

  /** The project's re-merge request (ADR 0331), null before any change of merging attributes. */
  async remergeOf(projectId: string): Promise<RemergeState | null> {
    const [row]: Array<{ requested_at: Date; contacts_done: string; done_at: Date | null }> = await this.ds.query(
      `SELECT requested_at, contacts_done, done_at FROM remerge_requests WHERE project_id = $1`,
      [projectId],
    );
    return row ? { requestedAt: row.requested_at, contactsDone: Number(row.contacts_done), doneAt: row.done_at } : null;
  }

  async hasSmsSender(projectId: string, senderId: string): Promise<boolean> {
    return isUuid(senderId) && this.ds.getRepository(SenderEntity).existsBy({ projectId, id: senderId, channel: 'sms' });
  }
}
