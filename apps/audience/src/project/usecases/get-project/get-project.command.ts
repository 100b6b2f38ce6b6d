import type { Scope } from '@meld/contracts';

export interface GetProjectCommand {
  organizationId: string;
  projectId: string;
  /** The caller's scopes: echoed in metadata, and ACCOUNT_READ reveals the funds. */
  scopes: Scope[];
}
