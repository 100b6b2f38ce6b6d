import { InternalPublic } from '@meld/auth';
import { Body, Controller, Post, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { RegisterClient } from './register-client';

@ApiExcludeController()
@InternalPublic()
@Controller('oauth')
export class RegistrationController {
  constructor(private readonly registerClient: RegisterClient) {}

  @Post('register')
  async register(@Body() body: unknown, @Res() reply: FastifyReply) {
    const answer = await this.registerClient.execute(body);
    reply.code(answer.status).header('cache-control', 'no-store').send(answer.body);
  }
}
