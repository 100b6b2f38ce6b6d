import { ApiPostgresUnavailable, ApiTags, SenderSchema, envelope } from '@meld/api';
import { Controller, Param, Patch, Post, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { AdminOperation } from '../http/admin-docs';
import { AdminTokenGuard } from '../http/admin-token.guard';
import { JsonBody } from '../http/json-body';
import { CreateSenderBody, type CreateSenderCommand } from './usecases/create-sender/create-sender.command';
import { CreateSender } from './usecases/create-sender/create-sender.usecase';
import { UpdateSenderBody, type UpdateSenderCommand } from './usecases/update-sender/update-sender.command';
import { UpdateSender } from './usecases/update-sender/update-sender.usecase';

@ApiTags('admin')
@UseGuards(AdminTokenGuard)
@ApiPostgresUnavailable()
@Controller('admin/v1/projects/:project/senders')
export class SendersController {
  constructor(
    private readonly createSender: CreateSender,
    private readonly updateSender: UpdateSender,
  ) {}

  @Post()
  @AdminOperation('Add an SMS sender or RCS agent with its per-country statuses', 201, envelope(SenderSchema, z.object({ project: z.string() })), [400, 404])
  create(@Param('project') projectUid: string, @JsonBody(CreateSenderBody) body: Omit<CreateSenderCommand, 'projectUid'>) {
    return this.createSender.execute({ ...body, projectUid });
  }

  @Patch(':sender')
  @AdminOperation('Change a sender: pause it (`status`), rename it, or replace its countries', 200, envelope(SenderSchema, z.object({ project: z.string() })), [400, 404])
  update(@Param('project') projectUid: string, @Param('sender') senderId: string, @JsonBody(UpdateSenderBody) body: Omit<UpdateSenderCommand, 'projectUid' | 'senderId'>) {
    return this.updateSender.execute({ ...body, projectUid, senderId });
  }
}
