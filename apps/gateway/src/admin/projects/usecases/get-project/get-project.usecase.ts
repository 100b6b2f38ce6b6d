import { Injectable } from '@nestjs/common';
import { found } from '../../../shared/found';
import { adminProjectView } from '../../admin-project.view';
import { ProjectsRepository } from '../../projects.repository';

export interface GetProjectCommand {
  projectUid: string;
}

@Injectable()
export class GetProject {
  constructor(private readonly projects: ProjectsRepository) {}

  async execute({ projectUid }: GetProjectCommand) {
    const project = found(await this.projects.findByUid(projectUid), 'project', projectUid);
    return adminProjectView(project, await this.projects.remergeOf(project.id));
  }
}
