import type { Principal } from '@meld/auth';
import { Injectable } from '@nestjs/common';
import { AudienceRoots } from '../../../count/audience-roots';
import { AudiencePages } from '../../audience-pages';
import { decodeScrollId, encodeScrollId, filterDigest } from '../../scroll-id';

export interface ScrollAudienceCommand {
  principal: Principal;
  projectId: string;
  version?: unknown;
  root?: unknown;
  size: number;
  scrollId?: string;
}

/**
 * `POST /audience/scroll` (ADR 0330): the whole audience matching a filter, page after page, for
 * exports and syncs. Keyset pages in the snapshot's order: each page costs the same however far
 * the scroll is, and a contact present from the first page to the last is listed exactly once.
 */
@Injectable()
export class ScrollAudience {
  constructor(
    private readonly roots: AudienceRoots,
    private readonly pages: AudiencePages,
  ) {}

  async execute({ principal, projectId, version, root: input, size, scrollId }: ScrollAudienceCommand) {
    const { root } = await this.roots.resolve({ projectId, version, root: input, principal });
    const digest = filterDigest(projectId, version, input);
    const after = scrollId === undefined ? undefined : decodeScrollId(scrollId, digest);
    const page = await this.pages.page({ principal, projectId, root, after, limit: size });
    return { entity: page.contacts, metadata: { count: page.contacts.length, scrollId: page.more && page.last ? encodeScrollId(digest, page.last) : null } };
  }
}
