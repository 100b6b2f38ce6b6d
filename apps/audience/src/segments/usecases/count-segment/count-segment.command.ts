import type { Principal } from '@meld/auth';

export interface CountSegmentCommand {
  principal: Principal;
  projectId: string;
  segmentId: string;
  /**
   * The query parameters as Fastify reads them (a repeated one is a list): `filterCompliance`, JSON
   * as in the audience count body, e.g. {"sms":"opt-in"}; any other is refused.
   */
  query: Readonly<Record<string, unknown>>;
}
