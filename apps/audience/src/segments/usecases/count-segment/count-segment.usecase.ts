import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { FilterCatalogueRepository } from '../../../count/filter-catalogue.repository';
import { CountAudienceUseCase } from '../../../count/usecases/count-audience/count-audience.usecase';
import { assertStillValid } from '../../segment-filter';
import { SegmentsRepository } from '../../segments.repository';
import type { CountSegmentCommand } from './count-segment.command';

/**
 * The live, exact count of a segment's audience: the audience count of its stored filter
 * (same compliance rules; conditions on email or phone need the caller's mayReadPii, as
 * for a direct count, or a saved segment would be a way around it).
 */
@Injectable()
export class CountSegment {
  constructor(
    private readonly segments: SegmentsRepository,
    private readonly catalogues: FilterCatalogueRepository,
    private readonly countAudience: CountAudienceUseCase,
  ) {}

  async execute({ principal, projectId, segmentId, filterCompliance }: CountSegmentCommand) {
    const segment = await this.segments.find(projectId, segmentId);
    if (!segment) throw new NotFoundException('segment not found');
    const compliance = complianceOf(filterCompliance);
    const catalogue = await this.catalogues.catalogue(projectId);
    assertStillValid(segment, catalogue);
    const { totalHits, compliance: figures } = await this.countAudience.execute({ projectId, version: segment.filter.version, root: segment.filter.root, filterCompliance: compliance, principal, rootPath: 'filter.root', catalogue });
    return { metadata: figures ? { totalHits, compliance: figures } : { totalHits } };
  }
}

function complianceOf(text: unknown): Record<string, string> | undefined {
  if (text === undefined) return undefined;
  try {
    if (typeof text !== 'string') throw new Error('given more than once');
    return JSON.parse(text);
  } catch {
    throw new BadRequestException({ message: 'filterCompliance: is not JSON (e.g. {"sms":"opt-in"}, URL-encoded)', details: { parameter: 'filterCompliance' } });
  }
}
