import { Injectable, NotFoundException } from '@nestjs/common';
import { SegmentsRepository } from '../../segments.repository';
import type { DeleteSegmentCommand } from './delete-segment.command';

@Injectable()
export class DeleteSegment {
  constructor(private readonly segments: SegmentsRepository) {}

  async execute({ projectId, segmentId }: DeleteSegmentCommand): Promise<void> {
    if (!(await this.segments.delete(projectId, segmentId))) throw new NotFoundException('segment not found');
  }
}
