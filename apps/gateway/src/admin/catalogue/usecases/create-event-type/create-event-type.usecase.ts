import { isUniqueViolation } from '@meld/db';
import { EventParameterSpecSchema, EventTypeSpecSchema, toEventParameterSpec, toEventTypeSpec } from '@meld/api';
import { ConflictException, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { ProjectsRepository } from '../../../projects/projects.repository';
import { found } from '../../../shared/found';
import { CatalogueAdminRepository } from '../../catalogue-admin.repository';
import type { CreateEventTypeCommand } from './create-event-type.command';

export const AdminEventTypeSchema = EventTypeSpecSchema.extend({
  retentionDays: z.int().nullable(),
  parameters: z.array(EventParameterSpecSchema),
}).meta({ id: 'AdminEventType' });

@Injectable()
export class CreateEventType {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly catalogue: CatalogueAdminRepository,
  ) {}

  async execute({ projectUid, parameters, ...values }: CreateEventTypeCommand) {
    const project = found(await this.projects.findByUid(projectUid), 'project', projectUid);
    const conflict = () => new ConflictException(`event type "${values.uid}" already exists in project "${project.uid}"`);
    if (await this.catalogue.eventTypeExists(project.id, values.uid)) throw conflict();
    try {
      const created = await this.catalogue.createEventType(project.id, values, parameters);
      const entity: z.infer<typeof AdminEventTypeSchema> = {
        ...toEventTypeSpec(created.eventType),
        retentionDays: created.eventType.retentionDays,
        parameters: created.parameters.map(toEventParameterSpec),
      };
      return { entity, metadata: { project: project.uid } };
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict();
      throw err;
    }
  }
}
