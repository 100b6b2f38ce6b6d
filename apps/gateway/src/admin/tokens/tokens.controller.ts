import { ApiPostgresUnavailable, ApiTags, envelope } from '@meld/api';
import { Controller, Delete, Get, Param, Post, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { AdminOperation } from '../http/admin-docs';
import { AdminTokenGuard } from '../http/admin-token.guard';
import { JsonBody } from '../http/json-body';
import { IssuedTokenSchema, TokenSchema } from './token.resource';
import { CreateTokenBody, type CreateTokenCommand } from './usecases/create-token/create-token.command';
import { CreateToken } from './usecases/create-token/create-token.usecase';
import { ListTokens } from './usecases/list-tokens/list-tokens.usecase';
import { RevokeToken } from './usecases/revoke-token/revoke-token.usecase';

@ApiTags('admin')
@UseGuards(AdminTokenGuard)
@ApiPostgresUnavailable()
@Controller('admin/v1')
export class TokensController {
  constructor(
    private readonly createToken: CreateToken,
    private readonly listTokens: ListTokens,
    private readonly revokeToken: RevokeToken,
  ) {}

  @Post('organizations/:org/tokens')
  @AdminOperation('Issue a product token (the secret is in metadata.token, shown once)', 201, envelope(TokenSchema, IssuedTokenSchema), [400, 404])
  create(@Param('org') organizationId: string, @JsonBody(CreateTokenBody) body: Omit<CreateTokenCommand, 'organizationId'>) {
    return this.createToken.execute({ ...body, organizationId });
  }

  @Get('organizations/:org/tokens')
  @AdminOperation("List an organization's tokens (never their secrets)", 200, envelope(z.array(TokenSchema), z.object({ count: z.int() })), [404])
  list(@Param('org') organizationId: string) {
    return this.listTokens.execute({ organizationId });
  }

  @Delete('tokens/:tokenId')
  @AdminOperation('Revoke a token (idempotent); gateways forget it at once', 204, null, [404, 503])
  async revoke(@Param('tokenId') tokenId: string): Promise<void> {
    await this.revokeToken.execute({ tokenId });
  }
}
