import { CatalogueRepository } from '@meld/db';
import { toEventParameterSpec, toEventTypeSpec } from '@meld/api';
import { Injectable, NotFoundException } from '@nestjs/common';
import { StreamScope } from '../../stream-scope';
import type { StreamCommand } from '../../stream.command';

/** The `_event_parameters` an event type takes; an undeclared type is 404. */
@Injectable()
export class ListStreamEventParameters {
  constructor(
    private readonly scope: StreamScope,
    private readonly catalogue: CatalogueRepository,
  ) {}

  async execute(command: StreamCommand & { eventType: string }) {
    await this.scope.dataSource(command);
    const type = await this.catalogue.findEventType(command.projectId, command.eventType);
    if (!type) throw new NotFoundException(`event type "${command.eventType}" not found`);
    const parameters = await this.catalogue.listParameters(type);
    return { entity: parameters.map(toEventParameterSpec), metadata: { eventType: toEventTypeSpec(type) } };
  }
}
