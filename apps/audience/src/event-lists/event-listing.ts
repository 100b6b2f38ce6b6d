import { CONTACT_DATA_BLOCKED, contactDataMask, type Principal } from '@meld/auth';
import { EVENTS_LOOK_BACK_DAYS } from '@meld/contracts';
import { isoWithOffset } from '@meld/api';
import type { Sql } from '@meld/clickhouse';
import { eventsOfAudience, type EventRow } from '@meld/filters';
import { BadRequestException, ForbiddenException, Injectable } from '@nestjs/common';
import { filterErrorsAs400 } from '../count/audience-roots';
import { type AudienceSelectionInput, AudienceSelections } from '../segments/audience-selection';
import { EventListsRepository } from './event-lists.repository';
import { eventParameters } from '../shared/event-parameters';

/** The last second a ClickHouse DateTime holds (UInt32, 2106-02-07): a later dateTo would wrap to 1970 and match nothing. */
const LAST_DATETIME_S = 4_294_967_295;

const DAY_S = 86_400;

/** The filter both event listings take. */
export interface EventFilter {
  eventType?: string;
  datasource?: string;
  dateFrom?: string;
  dateTo?: string;
}

export interface ResolvedFilter {
  eventType?: string;
  dataSourceId?: string;
  /** unix seconds, [from, to) */
  range: { from: number; to: number };
  lookBackDays: number;
}

/**
 * What both event listings share (ADR 0332): the filter resolved against the project and the
 * plan's look-back, and each event shown as the data mode and level allow (parameters masked as
 * in the per-contact events read, ADR 0121; a blocked project is refused) with its source
 * contact and the audience contact it belongs to now.
 */
@Injectable()
export class EventListing {
  constructor(
    private readonly repository: EventListsRepository,
    private readonly selections: AudienceSelections,
  ) {}

  /**
   * The source contacts whose events a request keeps: those of the audience contacts its `root`
   * or `segment` selects now (`eventsOfAudience`), none named when it sends neither. `key`
   * identifies the selection for a scroll id's digest.
   */
  async contacts(principal: Principal, projectId: string, selection: AudienceSelectionInput): Promise<{ contacts?: Sql; key: unknown }> {
    const { root, key } = await this.selections.resolve(principal, projectId, selection);
    return { contacts: root ? await filterErrorsAs400(() => eventsOfAudience({ projectId, root })) : undefined, key };
  }

  /** The caller's view of contact-derived values (parameters, user ids); refuses a blocked project (403). */
  mask(principal: Principal): <T>(value: T) => T {
    const mask = contactDataMask(principal);
    if (!mask) throw new ForbiddenException(CONTACT_DATA_BLOCKED);
    return mask;
  }

  async resolve(principal: Principal, projectId: string, filter: EventFilter, now = new Date()): Promise<ResolvedFilter> {
    const lookBackDays = EVENTS_LOOK_BACK_DAYS[principal.plan ?? 's'];
    const nowS = Math.floor(now.getTime() / 1000);
    const since = nowS - lookBackDays * DAY_S;
    const from = Math.max(since, filter.dateFrom === undefined ? since : Math.floor(Date.parse(filter.dateFrom) / 1000));
    const to = filter.dateTo === undefined ? nowS + DAY_S : Math.min(LAST_DATETIME_S, Math.ceil(Date.parse(filter.dateTo) / 1000));
    if (to <= from) throw new BadRequestException({ message: 'invalid body: dateTo: must be after dateFrom and the look-back start', details: { fields: [{ path: 'dateTo', message: 'must be after dateFrom and the look-back start' }] } });
    let dataSourceId: string | undefined;
    if (filter.datasource !== undefined) {
      dataSourceId = (await this.repository.dataSourceId(projectId, filter.datasource)) ?? undefined;
      if (!dataSourceId) {
        const known = await this.repository.dataSourceUids(projectId);
        throw new BadRequestException({
          message: `invalid body: datasource: no data source "${filter.datasource}" in this project (known: ${known.join(', ') || 'none'})`,
          details: { fields: [{ path: 'datasource', message: 'unknown data source' }], known },
        });
      }
    }
    return { eventType: filter.eventType, dataSourceId, range: { from, to }, lookBackDays };
  }

  async show(projectId: string, rows: readonly EventRow[], mask: <T>(value: T) => T) {
    const audiences = await this.repository.audienceIds(projectId, rows);
    return rows.map((r) => ({
      // The source's text, often built from an order or message key holding an email or a phone (ADR 0354).
      id: mask(r.id),
      type: r.type,
      date: isoWithOffset(new Date(Number(r.ts) * 1000)),
      receivedAt: isoWithOffset(new Date(Number(r.rts) * 1000)),
      parameters: mask(eventParameters(r.keys, r.values)),
      dataSourceId: r.ds,
      // A source's user id is often an email, and a phone for auto-created contacts (ADR 0184): masked as parameters are.
      userId: mask(r.user),
      audienceId: audiences.get(`${r.ds}/${r.user}`) ?? null,
    }));
  }

  window(filter: ResolvedFilter) {
    return { lookBackDays: filter.lookBackDays, since: isoWithOffset(new Date(filter.range.from * 1000)), until: isoWithOffset(new Date(filter.range.to * 1000)) };
  }
}
