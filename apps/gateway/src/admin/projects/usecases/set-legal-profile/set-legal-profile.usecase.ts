import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { found } from '../../../shared/found';
import { ProjectsRepository } from '../../projects.repository';
import { LEGAL_PROFILE_STATUSES, type SetLegalProfileCommand } from './set-legal-profile.command';

export const LegalProfileSchema = z.object({ project: z.string(), status: z.enum(LEGAL_PROFILE_STATUSES) }).meta({ id: 'LegalProfile' });

/** The legal profile status the readiness `legal_profile` step reads (set by the operator until a review flow exists). */
@Injectable()
export class SetLegalProfile {
  constructor(private readonly projects: ProjectsRepository) {}

  async execute({ projectUid, status }: SetLegalProfileCommand) {
    const project = found(await this.projects.findByUid(projectUid), 'project', projectUid);
    const updated = await this.projects.update(project.id, { legalProfileStatus: status });
    return { entity: { project: updated.uid, status: updated.legalProfileStatus } };
  }
}
