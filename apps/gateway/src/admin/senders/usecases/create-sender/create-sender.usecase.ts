import { Injectable } from '@nestjs/common';
import { ProjectsRepository } from '../../../projects/projects.repository';
import { found } from '../../../shared/found';
import { toSenderResource } from '@meld/api';
import { SendersRepository } from '../../senders.repository';
import type { CreateSenderCommand } from './create-sender.command';

@Injectable()
export class CreateSender {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly senders: SendersRepository,
  ) {}

  async execute({ projectUid, countries, ...values }: CreateSenderCommand) {
    const project = found(await this.projects.findByUid(projectUid), 'project', projectUid);
    const created = await this.senders.create(project.id, values, countries);
    return { entity: toSenderResource(created.sender, created.countries), metadata: { project: project.uid } };
  }
}
