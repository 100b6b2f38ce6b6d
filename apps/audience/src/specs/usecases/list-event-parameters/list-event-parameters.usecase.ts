import { CatalogueRepository } from '@meld/db';
import { toEventParameterSpec, toEventTypeSpec } from '@meld/api';
import { Injectable, NotFoundException } from '@nestjs/common';

export interface ListEventParametersCommand {
  projectId: string;
  eventType: string;
}

/** The parameter specs of one event type; an undeclared type is 404 (spec: unknown type). */
@Injectable()
export class ListEventParameters {
  constructor(private readonly catalogue: CatalogueRepository) {}

  async execute({ projectId, eventType }: ListEventParametersCommand) {
    const type = await this.catalogue.findEventType(projectId, eventType);
    if (!type) throw new NotFoundException(`event type "${eventType}" not found`);
    const parameters = await this.catalogue.listParameters(type);
    return { entity: parameters.map(toEventParameterSpec), metadata: { eventType: toEventTypeSpec(type) } };
  }
}
