import { Injectable, NotFoundException } from '@nestjs/common';
import { SegmentsRepository } from '../../segments.repository';
import type { GetSegmentCommand } from './get-segment.command';

@Injectable()
export class GetSegment {
  constructor(private readonly segments: SegmentsRepository) {}

  async execute({ projectId, segmentId }: GetSegmentCommand) {
    const segment = await this.segments.find(projectId, segmentId);
    if (!segment) throw new NotFoundException('segment not found');
    return { entity: segment };
  }
}
