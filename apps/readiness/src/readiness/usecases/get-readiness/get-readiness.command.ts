import type { ReadinessChannel } from '../../readiness-rules';

export interface GetReadinessCommand {
  organizationId: string;
  projectId: string;
  /** null: the project report; else the channel's. */
  channel: ReadinessChannel | null;
}
