import type { Principal } from './principal';
import { NotFoundException } from '@nestjs/common';

export interface CallerProject {
  organizationId: string;
  id: string;
  uid: string;
}

/**
 * The project of the path, as the gateway resolved it into the principal. The gateway has
 * already checked access; a path that disagrees with the principal is answered like a
 * project the token cannot reach (404), never served from the path alone.
 */
export function projectOf(principal: Principal, projectUid: string): CallerProject {
  if (!principal.project || !principal.organizationId || principal.project.uid !== projectUid) throw new NotFoundException('project not found');
  return { organizationId: principal.organizationId, id: principal.project.id, uid: principal.project.uid };
}
