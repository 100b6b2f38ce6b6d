import { DATA_SOURCE, TokenEntity, isUuid } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';

@Injectable()
export class TokensRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  create(values: Partial<TokenEntity>): Promise<TokenEntity> {
    const repo = this.ds.getRepository(TokenEntity);
    return repo.save(repo.create(values));
  }

  listByOrganization(organizationId: string): Promise<TokenEntity[]> {
    return this.ds.getRepository(TokenEntity).find({ where: { organizationId }, order: { createdAt: 'ASC' } });
  }

  /** Sets `revoked_at` once (a second revocation keeps the first time); null when there is no such token. */
  async revoke(tokenId: string): Promise<TokenEntity | null> {
    if (!isUuid(tokenId)) return null;
    await this.ds.getRepository(TokenEntity).createQueryBuilder().update().set({ revokedAt: () => 'COALESCE(revoked_at, now())' }).where('id = :tokenId', { tokenId }).execute();
    return this.ds.getRepository(TokenEntity).findOneBy({ id: tokenId });
  }
}
