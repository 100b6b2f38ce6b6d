import { Injectable } from '@nestjs/common';
import { ProjectsRepository } from '../../../projects/projects.repository';
import { found } from '../../../shared/found';
import { toSenderResource } from '@meld/api';
import { SendersRepository } from '../../senders.repository';
import type { UpdateSenderCommand } from './update-sender.command';

@Injectable()
export class UpdateSender {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly senders: SendersRepository,
  ) {}

  async execute({ projectUid, senderId, countries, ...values }: UpdateSenderCommand) {
    const project = found(await this.projects.findByUid(projectUid), 'project', projectUid);
    const updated = found(await this.senders.update(project.id, senderId, values, countries), 'sender', senderId);
    return { entity: toSenderResource(updated.sender, updated.countries), metadata: { project: project.uid } };
  }
}
