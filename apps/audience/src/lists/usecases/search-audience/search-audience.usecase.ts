import type { Principal } from '@meld/auth';
import { Injectable } from '@nestjs/common';
import { AudienceSelections } from '../../../segments/audience-selection';
import { AudiencePages } from '../../audience-pages';
import { type AskedSortKey, SearchSort } from './search-sort';

export interface SearchAudienceCommand {
  principal: Principal;
  projectId: string;
  version?: unknown;
  root?: unknown;
  segment?: string;
  from: number;
  size: number;
  sort?: readonly AskedSortKey[];
}

/**
 * `POST /audience/search` (ADR 0330): one page of the contacts matching a filter at an offset, for
 * a screen that pages back and forth. No total: only `/audience/count` returns a size (probe rule
 * 1); `more` says whether a next page exists. `sort` orders by attribute values (ADR 0337). Offsets stop at 10,000 (`from + size`), beyond which
 * a scroll reads further at a steady cost.
 */
@Injectable()
export class SearchAudience {
  constructor(
    private readonly filters: AudienceSelections,
    private readonly pages: AudiencePages,
    private readonly sorts: SearchSort,
  ) {}

  async execute({ principal, projectId, from, size, sort, ...filter }: SearchAudienceCommand) {
    const { root } = await this.filters.resolve(principal, projectId, filter);
    const keys = sort ? await this.sorts.keys(principal, projectId, sort) : undefined;
    const page = await this.pages.page({ principal, projectId, root, offset: from, limit: size, sort: keys });
    return { entity: page.contacts, metadata: { from, size, count: page.contacts.length, more: page.more } };
  }
}
