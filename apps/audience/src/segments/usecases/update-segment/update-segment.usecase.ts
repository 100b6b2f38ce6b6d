import { Injectable, NotFoundException } from '@nestjs/common';
import { FilterCatalogueRepository } from '../../../count/filter-catalogue.repository';
import type { Segment } from '../../segment.schema';
import { checkedFilter } from '../../segment-filter';
import { SegmentsRepository } from '../../segments.repository';
import type { UpdateSegmentCommand } from './update-segment.command';

/** Changes the fields sent; a new filter is checked against today's catalogue. */
@Injectable()
export class UpdateSegment {
  constructor(
    private readonly segments: SegmentsRepository,
    private readonly catalogues: FilterCatalogueRepository,
  ) {}

  async execute({ projectId, segmentId, filter, ...rest }: UpdateSegmentCommand) {
    // Not found before a bad filter: the id is the first thing that can be wrong.
    if (!(await this.segments.find(projectId, segmentId))) throw new NotFoundException('segment not found');
    const values: Partial<Pick<Segment, 'name' | 'description' | 'filter'>> = { ...rest };
    if (filter) values.filter = checkedFilter(filter, await this.catalogues.catalogue(projectId), projectId);
    const segment = await this.segments.update(projectId, segmentId, values);
    if (!segment) throw new NotFoundException('segment not found');
    return { entity: segment };
  }
}
