import { AttributeEntity, DATA_SOURCE, EventParameterEntity, EventTypeEntity } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';

/** Catalogue writes (reads are the shared CatalogueRepository of @meld/db). */
@Injectable()
export class CatalogueAdminRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  eventTypeExists(projectId: string, uid: string): Promise<boolean> {
    return this.ds.getRepository(EventTypeEntity).existsBy({ projectId, uid });
  }

  attributeExists(projectId: string, uid: string): Promise<boolean> {
    return this.ds.getRepository(AttributeEntity).existsBy({ projectId, uid });
  }

  /** The type and its parameters in one transaction: a type is never visible half-declared. */
  createEventType(
    projectId: string,
    values: Partial<EventTypeEntity>,
    parameters: Partial<EventParameterEntity>[],
  ): Promise<{ eventType: EventTypeEntity; parameters: EventParameterEntity[] }> {
    return this.ds.transaction(async (em) => {
      const eventType = await em.save(em.create(EventTypeEntity, { ...values, projectId }));
      const saved = await em.save(parameters.map((p) => em.create(EventParameterEntity, { ...p, eventTypeId: eventType.id })));
      return { eventType, parameters: saved };
    });
  }

  createAttribute(projectId: string, values: Partial<AttributeEntity>): Promise<AttributeEntity> {
    const repo = this.ds.getRepository(AttributeEntity);
    return repo.save(repo.create({ ...values, projectId, reserved: false }));
  }
}
