import { CatalogueRepository } from '@meld/db';
import { toEventTypeSpec } from '@meld/api';
import { Injectable } from '@nestjs/common';

export interface ListEventTypesCommand {
  projectId: string;
}

/** The event catalogue: every declared type, by uid. */
@Injectable()
export class ListEventTypes {
  constructor(private readonly catalogue: CatalogueRepository) {}

  async execute({ projectId }: ListEventTypesCommand) {
    const types = await this.catalogue.listEventTypes(projectId);
    return { entity: types.map(toEventTypeSpec), metadata: { count: types.length } };
  }
}
