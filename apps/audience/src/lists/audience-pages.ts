import { type Contact, type Principal, serializeContact } from '@meld/auth';
import type { AudienceFilterNode } from '@meld/filters';
import { Injectable } from '@nestjs/common';
import { filterErrorsAs400 } from '../count/audience-roots';
import { ListsRepository } from './lists.repository';
import type { ScrollPosition } from './scroll-id';

export interface PageRequest {
  principal: Principal;
  projectId: string;
  root?: AudienceFilterNode;
  after?: ScrollPosition;
  offset?: number;
  limit: number;
}

/**
 * A page of the audience as the caller may see it: the ids the filter selects in the snapshot, then
 * the contacts read from Postgres in that order, each through the data-level serializer. One row
 * beyond the page is read to tell whether more follow, so a last page says so rather than leaving
 * an empty one to fetch. A contact deleted between the two reads is left out (the page is then
 * shorter); `last` is the page's last snapshot row whatever was left out, so a scroll goes on from
 * the right place.
 */
@Injectable()
export class AudiencePages {
  constructor(private readonly lists: ListsRepository) {}

  async page(request: PageRequest): Promise<{ contacts: Contact[]; more: boolean; last?: ScrollPosition }> {
    const { principal, projectId, root, after, offset, limit } = request;
    const read = await filterErrorsAs400(() => this.lists.page({ projectId, root, after, offset, limit: limit + 1 }));
    const rows = read.slice(0, limit);
    const byId = new Map((await this.lists.contacts(projectId, rows.map((r) => r.id))).map((c) => [c.id, c]));
    const contacts = rows.flatMap(({ id }) => {
      const row = byId.get(id);
      // The audience id last: a custom attribute named `id` must not replace it (as the single reads).
      return row ? [serializeContact({ ...row.attributes, id: row.id, _datasources: row.datasources, _ds_contact_ids: row.ds_contact_ids }, principal)] : [];
    });
    return { contacts, more: read.length > limit, last: rows.at(-1) };
  }
}
