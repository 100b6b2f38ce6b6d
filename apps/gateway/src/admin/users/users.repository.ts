import { DATA_SOURCE, UserEntity } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';

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
}
