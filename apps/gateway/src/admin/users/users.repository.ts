import { DATA_SOURCE, UserEntity, isUuid } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';

@Injectable()
export class UsersRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  /** Emails are unique across organizations: one login, one account. */
  emailTaken(email: string): Promise<boolean> {
    return this.ds.getRepository(UserEntity).existsBy({ email });
  }

  create(organizationId: string, email: string, passwordHash: string): Promise<UserEntity> {
    const repo = this.ds.getRepository(UserEntity);
    return repo.save(repo.create({ organizationId, email, passwordHash }));
  }

  /** Deletes the user with everything issued in its name; returns the ids of its tokens, or null when there is no such user. */
  async delete(userId: string): Promise<string[] | null> {
    if (!isUuid(userId)) return null;
    return this.ds.transaction(async (em: EntityManager) => {
      const tokens: Array<{ id: string }> = await em.query(`SELECT id FROM tokens WHERE user_id = $1 FOR UPDATE`, [userId]);
      // TypeORM answers a DELETE … RETURNING with [rows, affected].
      const [deleted] = await em.query(`DELETE FROM users WHERE id = $1 RETURNING id`, [userId]);
      return deleted.length ? tokens.map((t) => t.id) : null;
    });
  }
}
