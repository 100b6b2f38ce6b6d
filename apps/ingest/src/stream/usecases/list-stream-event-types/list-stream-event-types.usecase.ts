import { CatalogueRepository } from '@meld/db';
import { toEventTypeSpec } from '@meld/api';
import { Injectable } from '@nestjs/common';
import { StreamScope } from '../../stream-scope';
import type { StreamCommand } from '../../stream.command';

/** The event types a data source may send (`_event_type` must be one of these uids). */
@Injectable()
export class ListStreamEventTypes {
  constructor(
    private readonly scope: StreamScope,
    private readonly catalogue: CatalogueRepository,
  ) {}

  async execute(command: StreamCommand) {
    await this.scope.dataSource(command);
    const types = await this.catalogue.listEventTypes(command.projectId);
    return { entity: types.map(toEventTypeSpec), metadata: { count: types.length } };
  }
}
