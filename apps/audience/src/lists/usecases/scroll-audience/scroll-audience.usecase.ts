import type { Principal } from '@meld/auth';
import { Injectable } from '@nestjs/common';
import { AudienceSelections } from '../../../segments/audience-selection';
import { AudiencePages } from '../../audience-pages';
import { decodeScrollId, encodeScrollId, filterDigest, isUInt64, isUuidText, isWindowWidth } from '../../../shared/scroll-id';

export interface ScrollAudienceCommand {
  principal: Principal;
  projectId: string;
  version?: unknown;
  root?: unknown;
  segment?: string;
  size: number;
  scrollId?: string;
}

/**
 * `POST /audience/scroll` (ADR 0330): the whole audience matching a filter, page after page, for
 * exports and syncs. Keyset pages in the snapshot's order, read in hash windows sized from the
 * first page's count and carried in the scroll id: each page costs about the same however far the
 * scroll is, and a contact present from the first page to the last is listed exactly once.
 */
@Injectable()
export class ScrollAudience {
  constructor(
    private readonly filters: AudienceSelections,
    private readonly pages: AudiencePages,
  ) {}

  async execute({ principal, projectId, size, scrollId, ...filter }: ScrollAudienceCommand) {
    const { root, key } = await this.filters.resolve(principal, projectId, filter);
    const digest = filterDigest('audience', projectId, key);
    const state = scrollId === undefined ? undefined : decodeScrollId(scrollId, digest, ({ h, i, s }) => (isUInt64(h) && isUuidText(i) && isWindowWidth(s) ? { after: { hash: h, id: i }, span: BigInt(s) } : null));
    const page = await this.pages.page({ principal, projectId, root, after: state?.after, span: state?.span, limit: size });
    const next = page.more && page.last ? encodeScrollId(digest, { h: page.last.hash, i: page.last.id, s: page.span.toString() }) : null;
    return { entity: page.contacts, metadata: { count: page.contacts.length, scrollId: next } };
  }
}
