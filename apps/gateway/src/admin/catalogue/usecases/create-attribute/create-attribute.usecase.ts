import { isUniqueViolation } from '@meld/db';
import { toAttributeSpec } from '@meld/api';
import { ConflictException, Injectable } from '@nestjs/common';
import { ProjectsRepository } from '../../../projects/projects.repository';
import { found } from '../../../shared/found';
import { CatalogueAdminRepository } from '../../catalogue-admin.repository';
import type { CreateAttributeCommand } from './create-attribute.command';

/** A custom attribute of the catalogue (reserved `_` ones are seeded with the project). */
@Injectable()
export class CreateAttribute {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly catalogue: CatalogueAdminRepository,
  ) {}

  async execute({ projectUid, ...values }: CreateAttributeCommand) {
    const project = found(await this.projects.findByUid(projectUid), 'project', projectUid);
    const conflict = () => new ConflictException(`attribute "${values.uid}" already exists in project "${project.uid}"`);
    if (await this.catalogue.attributeExists(project.id, values.uid)) throw conflict();
    try {
      return { entity: toAttributeSpec(await this.catalogue.createAttribute(project.id, values)), metadata: { project: project.uid } };
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict();
      throw err;
    }
  }
}
