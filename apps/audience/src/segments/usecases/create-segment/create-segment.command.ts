import type { CreateSegmentInput } from '../../segment.schema';

export interface CreateSegmentCommand extends CreateSegmentInput {
  projectId: string;
}
