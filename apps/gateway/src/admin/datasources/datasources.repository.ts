import { DATA_SOURCE, DataSourceEntity, TokenEntity, isUuid } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';

@Injectable()
export class DataSourcesRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  uidTaken(projectId: string, uid: string): Promise<boolean> {
    return this.ds.getRepository(DataSourceEntity).existsBy({ projectId, uid });
  }

  /** A source of the project by its uid or its id, as the public API's paths name it. */
  async findInProject(projectId: string, key: string): Promise<DataSourceEntity | null> {
    const repo = this.ds.getRepository(DataSourceEntity);
    return (await repo.findOneBy({ projectId, uid: key })) ?? (isUuid(key) ? repo.findOneBy({ projectId, id: key }) : null);
  }

  listByProject(projectId: string): Promise<DataSourceEntity[]> {
    return this.ds.getRepository(DataSourceEntity).find({ where: { projectId }, order: { createdAt: 'ASC', uid: 'ASC' } });
  }

  /** The data source and its token in one transaction: a source is never created without a way to write to it. */
  createWithToken(projectId: string, values: Partial<DataSourceEntity>, token: Partial<TokenEntity>): Promise<{ dataSource: DataSourceEntity; token: TokenEntity }> {
    return this.ds.transaction(async (em) => {
      const dataSource = await em.save(em.create(DataSourceEntity, { ...values, projectId }));
      const saved = await em.save(em.create(TokenEntity, { ...token, dataSourceId: dataSource.id }));
      return { dataSource: await em.findOneByOrFail(DataSourceEntity, { id: dataSource.id }), token: saved };
    });
  }
}
