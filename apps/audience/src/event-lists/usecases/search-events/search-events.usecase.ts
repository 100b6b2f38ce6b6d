import type { Principal } from '@meld/auth';
import { Injectable } from '@nestjs/common';
import { filterErrorsAs400 } from '../../../count/audience-roots';
import type { AudienceSelectionInput } from '../../../segments/audience-selection';
import { EventListsRepository } from '../../event-lists.repository';
import { type EventFilter, EventListing } from '../../event-listing';

export interface SearchEventsCommand extends EventFilter, AudienceSelectionInput {
  principal: Principal;
  projectId: string;
  from: number;
  size: number;
}

/**
 * `POST /event/search` (ADR 0332): one page of the project's events matching the filter, newest
 * first, at an offset up to 10,000, for a screen of recent activity; `more` says whether events
 * follow. Read in date windows from the newest down.
 */
@Injectable()
export class SearchEvents {
  constructor(
    private readonly listing: EventListing,
    private readonly repository: EventListsRepository,
  ) {}

  async execute({ principal, projectId, from, size, version, root, segment, ...filter }: SearchEventsCommand) {
    const mask = this.listing.mask(principal);
    const { contacts } = await this.listing.contacts(principal, projectId, { version, root, segment });
    const resolved = await this.listing.resolve(principal, projectId, filter);
    const page = await filterErrorsAs400(() => this.repository.page({ projectId, ...resolved, contacts, order: 'desc', offset: from, limit: size }));
    const entity = await this.listing.show(projectId, page.rows, mask);
    return { entity, metadata: { from, size, count: entity.length, more: page.more, ...this.listing.window(resolved) } };
  }
}
