import type { Principal } from '@meld/auth';

export interface CountSegmentCommand {
  principal: Principal;
  projectId: string;
  segmentId: string;
  /** `filterCompliance` query parameter: JSON as in the audience count body, e.g. {"sms":"opt-in"}. */
  filterCompliance?: unknown;
}
