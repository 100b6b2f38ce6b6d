import type { ClickHouse } from '@meld/clickhouse';
import { DATA_SOURCE } from '@meld/db';
import { type AudienceSortedPageOptions, audienceSortedPage, type PagePosition, type WindowedPage, type WindowedPageOptions, windowedAudiencePage } from '@meld/filters';
import { CLICKHOUSE_READER } from '@meld/platform';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { CONTACT_ATTRIBUTES_SQL } from '../shared/contact-attributes-sql';
import { poolRead } from '../shared/pool-read';

export interface ListedContactRow {
  id: string;
  attributes: Record<string, unknown>;
  datasources: string[];
  ds_contact_ids: string[];
}

/**
 * Which contacts a page lists comes from the ClickHouse snapshot, where filters run (as counts),
 * in hash windows (ADR 0330); what they hold comes from Postgres, the tables identity-merge
 * writes, read by primary key.
 */
@Injectable()
export class ListsRepository {
  constructor(
    @Inject(CLICKHOUSE_READER) private readonly ch: ClickHouse,
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
  ) {}

  page(options: WindowedPageOptions): Promise<WindowedPage> {
    return windowedAudiencePage((statement) => this.ch.query(statement), options);
  }

  /** A page ordered by attribute values (ADR 0337): one read of the whole match, for a search's offsets. */
  sortedPage(options: AudienceSortedPageOptions): Promise<PagePosition[]> {
    return this.ch.query<PagePosition>(audienceSortedPage(options));
  }

  /** The contacts of these ids that still exist, in no particular order. */
  contacts(projectId: string, ids: readonly string[]): Promise<ListedContactRow[]> {
    if (!ids.length) return Promise.resolve([]);
    return poolRead<ListedContactRow>(
      this.ds,
      `SELECT c.id, ${CONTACT_ATTRIBUTES_SQL} AS attributes, c.datasources, c.ds_contact_ids FROM audience_contacts c WHERE c.project_id = $1 AND c.id = ANY($2::uuid[])`,
      [projectId, ids],
    );
  }
}
