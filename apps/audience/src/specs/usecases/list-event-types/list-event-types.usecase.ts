import { CatalogueRepository } from '@meld/db';
import { systemEventTypeSpec, toEventTypeSpec } from '@meld/api';
import { SYSTEM_EVENT_TYPES } from '@meld/contracts';
import { Injectable } from '@nestjs/common';

export interface ListEventTypesCommand {
  projectId: string;
}

/**
 * The event catalogue: every declared type, by uid, then the types Meld writes itself (`_sms_*`,
 * flagged `system`), which filters, counts and event reads accept like any (ADR 0336).
 */
@Injectable()
export class ListEventTypes {
  constructor(private readonly catalogue: CatalogueRepository) {}

  async execute({ projectId }: ListEventTypesCommand) {
    const declared = await this.catalogue.listEventTypes(projectId);
    const entity = [...declared.map(toEventTypeSpec), ...SYSTEM_EVENT_TYPES.map(systemEventTypeSpec)];
    return { entity, metadata: { count: entity.length } };
  }
}
