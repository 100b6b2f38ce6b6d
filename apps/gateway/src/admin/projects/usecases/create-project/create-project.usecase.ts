import { RESERVED_ATTRIBUTES } from '@meld/contracts';
import { isUniqueViolation } from '@meld/db';
import { ConflictException, Injectable } from '@nestjs/common';
import { fieldError } from '../../../http/field-error';
import { OrganizationsRepository } from '../../../organizations/organizations.repository';
import { found } from '../../../shared/found';
import { uidCandidates } from '../../../shared/slug';
import { adminProjectView } from '../../admin-project.view';
import { checkKeywords } from '../../keywords.rule';
import { checkMergingAttributes } from '../../merging-attributes.rule';
import { projectColumns } from '../../project-patch';
import { ProjectsRepository } from '../../projects.repository';
import type { CreateProjectCommand } from './create-project.command';

/**
 * A new project: defaults for every configuration block with the given partial config
 * deep-merged over them, the reserved attributes seeded, a readable unique uid.
 */
@Injectable()
export class CreateProject {
  constructor(
    private readonly organizations: OrganizationsRepository,
    private readonly projects: ProjectsRepository,
  ) {}

  async execute({ organizationId, uid, mergingAttributes = [], ...fields }: CreateProjectCommand) {
    const organization = found(await this.organizations.findById(organizationId), 'organization', organizationId);
    // A new project has only the reserved attributes, so only reserved ones can merge yet.
    const merging = checkMergingAttributes(mergingAttributes, RESERVED_ATTRIBUTES);
    if (fields.defaultSmsSender) throw fieldError('defaultSmsSender', 'a new project has no senders yet: create one, then PATCH the project');
    const values = { ...projectColumns(fields), organizationId: organization.id, mergingAttributes: merging };
    checkKeywords(fields.generalConfig, values.generalConfig);
    const attributes = RESERVED_ATTRIBUTES.map((a) => ({ ...a, reserved: true }));

    // A given uid is taken or not; a generated one moves on to the next candidate.
    for (const candidate of uid ? [uid] : uidCandidates(fields.name, 'project')) {
      if (await this.projects.uidTaken(candidate)) continue;
      try {
        return adminProjectView(await this.projects.create({ ...values, uid: candidate }, attributes));
      } catch (err) {
        if (!isUniqueViolation(err)) throw err; // taken between the check and the insert
      }
    }
    throw new ConflictException(uid ? `project uid "${uid}" already exists` : 'could not find a free project uid: give one explicitly');
  }
}
