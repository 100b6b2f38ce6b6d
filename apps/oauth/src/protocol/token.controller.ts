import { InternalPublic } from '@meld/auth';
import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiPostgresUnavailable, ApiOperation, ApiResponse, ApiTags } from '@meld/api';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RevokeEndpoint } from './revoke-endpoint';
import { type HttpAnswer, TokenEndpoint } from './token-endpoint';

const send = (reply: FastifyReply, answer: HttpAnswer) => reply.code(answer.status).headers(answer.headers).send(answer.body);

/** Anonymous: the gateway forwards `/oauth/*` without a principal (ADR 0145). */
@ApiTags('oauth')
@InternalPublic()
@ApiPostgresUnavailable()
@Controller('oauth')
export class TokenController {
  constructor(
    private readonly token: TokenEndpoint,
    private readonly revocation: RevokeEndpoint,
  ) {}

  @Post('token')
  @ApiOperation({ summary: 'Token endpoint', description: '`application/x-www-form-urlencoded`. `grant_type=authorization_code` with `code`, `redirect_uri`, `client_id` and `code_verifier` (PKCE S256 required, `plain` refused), or `grant_type=refresh_token` (rotated on every use; reusing a rotated token revokes the whole grant). Errors as RFC 6749 §5.2. Access tokens live 1 h.', security: [] })
  @ApiResponse({ status: 200, description: '`{access_token, token_type: "Bearer", expires_in, refresh_token, scope}`' })
  @ApiResponse({ status: 400, description: '`{"error": "invalid_grant" | "invalid_request" | "unsupported_grant_type" | …, "error_description"}`' })
  async exchange(@Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    send(reply, await this.token.exchange(req));
  }

  @Post('revoke')
  @ApiOperation({ summary: 'Revoke a token (RFC 7009)', description: 'An access or refresh token; always 200, also for a token that was not valid.', security: [] })
  @HttpCode(200)
  async revoke(@Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    send(reply, await this.revocation.revoke(req));
  }
}
