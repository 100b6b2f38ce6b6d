import { CatalogueRepository } from '@meld/db';
import { toAttributeSpec } from '@meld/api';
import { Injectable } from '@nestjs/common';

export interface ListAttributesCommand {
  projectId: string;
}

/** The whole attribute catalogue, internal and disabled ones included, with their flags. */
@Injectable()
export class ListAttributes {
  constructor(private readonly catalogue: CatalogueRepository) {}

  async execute({ projectId }: ListAttributesCommand) {
    const attributes = await this.catalogue.listAttributes(projectId);
    return { entity: attributes.map(toAttributeSpec), metadata: { count: attributes.length } };
  }
}
