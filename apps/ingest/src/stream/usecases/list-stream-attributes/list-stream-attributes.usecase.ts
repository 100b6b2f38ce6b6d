import { CatalogueRepository } from '@meld/db';
import { toAttributeSpec } from '@meld/api';
import { Injectable } from '@nestjs/common';
import { StreamScope } from '../../stream-scope';
import type { StreamCommand } from '../../stream.command';

/**
 * The attributes a data source accepts: enabled and not internal (internal ones, such as
 * `_datasources`, are maintained by Meld). Clients check names here to avoid creating
 * attributes by typo (ingest spec).
 */
@Injectable()
export class ListStreamAttributes {
  constructor(
    private readonly scope: StreamScope,
    private readonly catalogue: CatalogueRepository,
  ) {}

  async execute(command: StreamCommand) {
    await this.scope.dataSource(command);
    const accepted = (await this.catalogue.listAttributes(command.projectId)).filter((a) => a.enabled && !a.internal);
    return { entity: accepted.map(toAttributeSpec), metadata: { count: accepted.length } };
  }
}
