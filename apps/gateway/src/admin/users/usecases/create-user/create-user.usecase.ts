import { isUniqueViolation } from '@meld/db';
import { isoWithOffset, timestamp } from '@meld/api';
import { hashPassword } from '@meld/auth';
import { ConflictException, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { OrganizationsRepository } from '../../../organizations/organizations.repository';
import { found } from '../../../shared/found';
import { UsersRepository } from '../../users.repository';
import type { CreateUserCommand } from './create-user.command';

export const UserSchema = z.object({ id: z.string(), organizationId: z.string(), email: z.string(), createdAt: timestamp() }).meta({ id: 'User' });

/** A dashboard user: the password only ever exists as a salted scrypt hash. */
@Injectable()
export class CreateUser {
  constructor(
    private readonly organizations: OrganizationsRepository,
    private readonly users: UsersRepository,
  ) {}

  async execute({ organizationId, email, password }: CreateUserCommand) {
    const organization = found(await this.organizations.findById(organizationId), 'organization', organizationId);
    const conflict = () => new ConflictException(`a user with email "${email}" already exists`);
    if (await this.users.emailTaken(email)) throw conflict();
    try {
      const user = await this.users.create(organization.id, email, await hashPassword(password));
      return { entity: { id: user.id, organizationId: user.organizationId, email: user.email, createdAt: isoWithOffset(user.createdAt) } };
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict();
      throw err;
    }
  }
}
