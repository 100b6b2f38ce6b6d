import { ApiPostgresUnavailable, ApiTags, entityOnly } from '@meld/api';
import { Controller, Delete, Param, Post, UseGuards } from '@nestjs/common';
import { AdminOperation } from '../http/admin-docs';
import { AdminTokenGuard } from '../http/admin-token.guard';
import { JsonBody } from '../http/json-body';
import { CreateUserBody, type CreateUserCommand } from './usecases/create-user/create-user.command';
import { CreateUser, UserSchema } from './usecases/create-user/create-user.usecase';
import { DeleteUser } from './usecases/delete-user/delete-user.usecase';

@ApiTags('admin')
@UseGuards(AdminTokenGuard)
@ApiPostgresUnavailable()
@Controller('admin/v1')
export class UsersController {
  constructor(
    private readonly createUser: CreateUser,
    private readonly deleteUser: DeleteUser,
  ) {}

  @Post('organizations/:org/users')
  @AdminOperation('Create a dashboard user (consent screen login)', 201, entityOnly(UserSchema), [400, 404, 409])
  create(@Param('org') organizationId: string, @JsonBody(CreateUserBody) body: Omit<CreateUserCommand, 'organizationId'>) {
    return this.createUser.execute({ ...body, organizationId });
  }

  @Delete('users/:userId')
  @AdminOperation('Delete a dashboard user: their consent sessions, OAuth grants and tokens end; gateways forget the tokens at once', 204, null, [404, 503])
  async remove(@Param('userId') userId: string): Promise<void> {
    await this.deleteUser.execute({ userId });
  }
}
