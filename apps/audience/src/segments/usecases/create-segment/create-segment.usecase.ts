import { Injectable } from '@nestjs/common';
import { FilterCatalogueRepository } from '../../../count/filter-catalogue.repository';
import { checkedFilter } from '../../segment-filter';
import { SegmentsRepository } from '../../segments.repository';
import type { CreateSegmentCommand } from './create-segment.command';

/** Saves an audience filter as a segment once the catalogue accepts it. */
@Injectable()
export class CreateSegment {
  constructor(
    private readonly segments: SegmentsRepository,
    private readonly catalogues: FilterCatalogueRepository,
  ) {}

  async execute({ projectId, name, description, filter }: CreateSegmentCommand) {
    const checked = checkedFilter(filter, await this.catalogues.catalogue(projectId), projectId);
    return { entity: await this.segments.create(projectId, { name, description: description ?? null, filter: checked }) };
  }
}
