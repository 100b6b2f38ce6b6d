import { CatalogueRepository } from '@meld/db';
import { systemEventParameterSpec, systemEventTypeSpec, toEventParameterSpec, toEventTypeSpec } from '@meld/api';
import { SYSTEM_EVENT_TYPES } from '@meld/contracts';
import { Injectable, NotFoundException } from '@nestjs/common';

export interface ListEventParametersCommand {
  projectId: string;
  eventType: string;
}

/** The parameter specs of one event type, declared or Meld's own (ADR 0336); an unknown type is 404. */
@Injectable()
export class ListEventParameters {
  constructor(private readonly catalogue: CatalogueRepository) {}

  async execute({ projectId, eventType }: ListEventParametersCommand) {
    const system = SYSTEM_EVENT_TYPES.find((t) => t.uid === eventType);
    if (system) return { entity: system.parameters.map(systemEventParameterSpec), metadata: { eventType: systemEventTypeSpec(system) } };
    const type = await this.catalogue.findEventType(projectId, eventType);
    if (!type) throw new NotFoundException(`event type "${eventType}" not found`);
    const parameters = await this.catalogue.listParameters(type);
    return { entity: parameters.map(toEventParameterSpec), metadata: { eventType: toEventTypeSpec(type) } };
  }
}
