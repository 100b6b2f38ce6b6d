import type { UpdateSegmentInput } from '../../segment.schema';

export interface UpdateSegmentCommand extends UpdateSegmentInput {
  projectId: string;
  segmentId: string;
}
