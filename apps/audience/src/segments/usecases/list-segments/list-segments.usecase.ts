import { listQueryOf, pageMetadata } from '@meld/api';
import { Injectable } from '@nestjs/common';
import { SEGMENT_FIELDS } from '../../segment-fields';
import { SegmentsRepository } from '../../segments.repository';
import type { ListSegmentsCommand } from './list-segments.command';

@Injectable()
export class ListSegments {
  constructor(private readonly segments: SegmentsRepository) {}

  async execute({ projectId, queryString }: ListSegmentsCommand) {
    const query = listQueryOf(queryString, SEGMENT_FIELDS);
    const { segments, total } = await this.segments.list(projectId, query);
    return { entity: segments, metadata: pageMetadata(query, segments.length, total) };
  }
}
