import { InternalPublic } from '@meld/auth';
import { Body, Controller, Post, Res } from '@nestjs/common';
import { ApiPostgresUnavailable, ApiOperation, ApiResponse, ApiTags } from '@meld/api';
import type { FastifyReply } from 'fastify';
import { RegisterClient } from './register-client';

@ApiTags('oauth')
@InternalPublic()
@ApiPostgresUnavailable()
@Controller('oauth')
export class RegistrationController {
  constructor(private readonly registerClient: RegisterClient) {}

  @Post('register')
  @ApiOperation({ summary: 'Register a client (RFC 7591 Dynamic Client Registration)', description: 'Anonymous, rate-limited per IP. `redirect_uris` must be https or loopback http; `scope`, if given, names Meld scopes and bounds its later authorization requests; a bad field is 400 with an OAuth error body (`invalid_redirect_uri`, `invalid_client_metadata`). Answers 201 with the client, `client_secret` for confidential clients.', security: [] })
  @ApiResponse({ status: 201, description: 'the registered client (RFC 7591 §3.2.1)' })
  @ApiResponse({ status: 400, description: '`{"error": "invalid_redirect_uri" | "invalid_client_metadata", "error_description"}`' })
  async register(@Body() body: unknown, @Res() reply: FastifyReply) {
    const answer = await this.registerClient.execute(body);
    reply.code(answer.status).header('cache-control', 'no-store').send(answer.body);
  }
}
