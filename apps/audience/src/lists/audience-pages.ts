import { type Contact, type Principal, serializeContact } from '@meld/auth';
import type { AudienceFilterNode, AudienceSortKey, PagePosition, WindowedPage } from '@meld/filters';
import { Injectable } from '@nestjs/common';
import { filterErrorsAs400 } from '../count/audience-roots';
import { ListsRepository } from './lists.repository';

export interface PageRequest {
  principal: Principal;
  projectId: string;
  root?: AudienceFilterNode;
  /** Keyset position: the page starts after it (scroll). */
  after?: PagePosition;
  /** Contacts skipped before the page (search). */
  offset?: number;
  limit: number;
  /** Window width the previous page ended with (from its scroll id); absent: sized from a count. */
  span?: bigint;
  /** Attribute order (a search, ADR 0337): the page is read at `offset` from the whole match, not window by window. */
  sort?: readonly AudienceSortKey[];
}

export interface Page {
  contacts: Contact[];
  more: boolean;
  /** The page's last snapshot row: where the next page starts. */
  last?: PagePosition;
  span: bigint;
}

/**
 * A page of the audience as the caller may see it (ADR 0330): the snapshot rows the filter selects
 * (windowedAudiencePage), then the contacts read from Postgres in that order, each through the
 * data-level serializer. A contact gone from Postgres but still in the snapshot (the sink trails
 * identity-merge) is left out, so a page can be shorter than asked; `last` is the page's last
 * snapshot row whatever was left out, so a scroll goes on from the right place.
 */
@Injectable()
export class AudiencePages {
  constructor(private readonly lists: ListsRepository) {}

  async page(request: PageRequest): Promise<Page> {
    const { principal, projectId, root, after, offset, limit, span, sort } = request;
    const page = await filterErrorsAs400(() => (sort?.length ? this.sorted(projectId, root, sort, offset ?? 0, limit) : this.lists.page({ projectId, root, after, offset, limit, span })));
    const byId = new Map((await this.lists.contacts(projectId, page.rows.map((r) => r.id))).map((c) => [c.id, c]));
    const contacts = page.rows.flatMap(({ id }) => {
      const row = byId.get(id);
      // The audience id last: a custom attribute named `id` must not replace it (as the single reads).
      return row ? [serializeContact({ ...row.attributes, id: row.id, _datasources: row.datasources, _ds_contact_ids: row.ds_contact_ids }, principal)] : [];
    });
    return { contacts, more: page.more, last: page.rows.at(-1), span: page.span };
  }

  /** A sorted page, one row beyond it read to tell whether more follow. */
  private async sorted(projectId: string, root: AudienceFilterNode | undefined, sort: readonly AudienceSortKey[], offset: number, limit: number): Promise<WindowedPage> {
    const read = await this.lists.sortedPage({ projectId, root, sort, offset, limit: limit + 1 });
    // A contact changing during the read can show twice (audienceSortedPage): its first row stands.
    const rows = [...new Map(read.map((r) => [r.id, r])).values()];
    return { rows: rows.slice(0, limit), more: rows.length > limit, span: 0n };
  }
}
