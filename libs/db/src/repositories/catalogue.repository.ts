import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { DATA_SOURCE } from '../db.module';
import { AttributeEntity, EventParameterEntity, EventTypeEntity } from '../entities';

/**
 * Reads of a project's catalogue (attributes, event types, parameters), shared by the apps
 * that serve or enforce it (audience specs, ingest specs and validation). Every method
 * takes the project id: there is no query without a tenant.
 */
@Injectable()
export class CatalogueRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  /** Reserved attributes first, then the project's own by creation; ties (one insert) by uid. */
  listAttributes(projectId: string): Promise<AttributeEntity[]> {
    return this.ds.getRepository(AttributeEntity).find({ where: { projectId }, order: { reserved: 'DESC', createdAt: 'ASC', uid: 'ASC' } });
  }

  listEventTypes(projectId: string): Promise<EventTypeEntity[]> {
    return this.ds.getRepository(EventTypeEntity).find({ where: { projectId }, order: { uid: 'ASC' } });
  }

  findEventType(projectId: string, uid: string): Promise<EventTypeEntity | null> {
    return this.ds.getRepository(EventTypeEntity).findOneBy({ projectId, uid });
  }

  /** Parameters of an event type already resolved within the project (so tenancy holds). */
  listParameters(eventType: Pick<EventTypeEntity, 'id'>): Promise<EventParameterEntity[]> {
    return this.ds.getRepository(EventParameterEntity).find({ where: { eventTypeId: eventType.id }, order: { parameter: 'ASC' } });
  }
}
