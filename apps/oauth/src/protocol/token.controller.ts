import { InternalPublic } from '@meld/auth';
import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RevokeEndpoint } from './revoke-endpoint';
import { type HttpAnswer, TokenEndpoint } from './token-endpoint';

const send = (reply: FastifyReply, answer: HttpAnswer) => reply.code(answer.status).headers(answer.headers).send(answer.body);

/** Anonymous: the gateway forwards `/oauth/*` without a principal (ADR 0145). */
@ApiExcludeController()
@InternalPublic()
@Controller('oauth')
export class TokenController {
  constructor(
    private readonly token: TokenEndpoint,
    private readonly revocation: RevokeEndpoint,
  ) {}

  @Post('token')
  async exchange(@Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    send(reply, await this.token.exchange(req));
  }

  @Post('revoke')
  @HttpCode(200)
  async revoke(@Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    send(reply, await this.revocation.revoke(req));
  }
}
