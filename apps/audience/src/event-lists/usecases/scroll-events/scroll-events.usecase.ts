import type { Principal } from '@meld/auth';
import { Injectable } from '@nestjs/common';
import { ScrollCipher } from '../../../shared/scroll-cipher';
import { decodeScrollId, encodeScrollId, filterDigest } from '../../../shared/scroll-id';
import { filterErrorsAs400 } from '../../../count/audience-roots';
import type { AudienceSelectionInput } from '../../../segments/audience-selection';
import { EventListsRepository } from '../../event-lists.repository';
import { type EventFilter, EventListing } from '../../event-listing';

export interface ScrollEventsCommand extends EventFilter, AudienceSelectionInput {
  principal: Principal;
  projectId: string;
  size: number;
  scrollId?: string;
}

/**
 * `POST /event/scroll` (ADR 0332): every event of the project matching the filter within the
 * plan's look-back, oldest first, page after page, for exports and syncs. Keyset pages read in
 * date windows whose width travels in the scroll id: each page costs about the same wherever the
 * scroll is, and an event present throughout is listed exactly once.
 */
@Injectable()
export class ScrollEvents {
  constructor(
    private readonly listing: EventListing,
    private readonly repository: EventListsRepository,
    private readonly cipher: ScrollCipher,
  ) {}

  async execute({ principal, projectId, size, scrollId, version, root, segment, ...filter }: ScrollEventsCommand) {
    const mask = this.listing.mask(principal);
    const { contacts, key } = await this.listing.contacts(principal, projectId, { version, root, segment });
    const resolved = await this.listing.resolve(principal, projectId, filter);
    // The selection only when there is one: a scroll id issued before it existed still continues.
    const selection = root === undefined && segment === undefined ? [] : [key];
    const digest = filterDigest('events', projectId, filter.eventType ?? null, filter.datasource ?? null, filter.dateFrom ?? null, filter.dateTo ?? null, ...selection);
    const state =
      scrollId === undefined
        ? undefined
        : decodeScrollId(scrollId, digest, ({ d, x, i, s }) => {
            // The event id sealed (ADR 0354); `i`, the id in clear, is what scroll ids issued before carried.
            const id = x === undefined ? i : this.cipher.open(x, digest);
            return isSeconds(d) && typeof id === 'string' && id.length <= 1000 && isSeconds(s) && s >= 1 ? { after: { date: d, id }, span: s } : null;
          });
    const page = await filterErrorsAs400(() => this.repository.page({ projectId, ...resolved, contacts, order: 'asc', after: state?.after, span: state?.span, limit: size }));
    const last = page.rows.at(-1);
    const next = page.more && last ? encodeScrollId(digest, { d: Number(last.ts), x: this.cipher.seal(last.id, digest), s: page.span }) : null;
    const entity = await this.listing.show(projectId, page.rows, mask);
    return { entity, metadata: { count: entity.length, scrollId: next, ...this.listing.window(resolved) } };
  }
}

/** A whole number of seconds a ClickHouse DateTime holds (a forged scroll id must not reach SQL as anything else). */
function isSeconds(x: unknown): x is number {
  return typeof x === 'number' && Number.isSafeInteger(x) && x >= 0 && x <= 4_291_747_199;
}
