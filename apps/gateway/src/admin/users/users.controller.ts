import { entityOnly } from '@meld/api';
import { Controller, Param, Post, UseGuards } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { AdminOperation } from '../http/admin-docs';
import { AdminTokenGuard } from '../http/admin-token.guard';
import { JsonBody } from '../http/json-body';
import { CreateUserBody, type CreateUserCommand } from './usecases/create-user/create-user.command';
import { CreateUser, UserSchema } from './usecases/create-user/create-user.usecase';

@ApiTags('admin')
@UseGuards(AdminTokenGuard)
@Controller('admin/v1/organizations/:org/users')
export class UsersController {
  constructor(private readonly createUser: CreateUser) {}

  @Post()
  @AdminOperation('Create a dashboard user (consent screen login)', 201, entityOnly(UserSchema), [400, 404, 409])
  create(@Param('org') organizationId: string, @JsonBody(CreateUserBody) body: Omit<CreateUserCommand, 'organizationId'>) {
    return this.createUser.execute({ ...body, organizationId });
  }
}
