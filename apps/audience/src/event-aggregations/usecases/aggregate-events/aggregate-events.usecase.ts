import { canonicalTimeZone, isoInZone } from '@meld/api';
import type { Principal } from '@meld/auth';
import type { EventScope, HistogramInterval } from '@meld/filters';
import { BadRequestException, Injectable } from '@nestjs/common';
import { filterErrorsAs400 } from '../../../count/audience-roots';
import { EventListing } from '../../../event-lists/event-listing';
import { parameterValue } from '../../../shared/event-parameters';
import { maskedBuckets } from '../../../shared/masked-buckets';
import { EventAggregationsRepository } from '../../event-aggregations.repository';
import { type AggregateEventsInput, type EventAggregations, MAX_BUCKETS } from '../../event-aggregations.schema';

type Asked = AggregateEventsInput['aggregations'][number];
type Result = EventAggregations['metadata']['aggregations'][number];

export interface AggregateEventsCommand extends AggregateEventsInput {
  principal: Principal;
  projectId: string;
}

const HOUR_S = 3600;
const DAY_S = 86_400;
/** The shortest a bucket can be (a DST change takes an hour off a day), to bound a histogram's buckets before reading it. */
const SHORTEST_BUCKET_S: Record<HistogramInterval, number> = { hour: HOUR_S, day: DAY_S - HOUR_S, week: 7 * DAY_S - HOUR_S, month: 28 * DAY_S - HOUR_S };

const fieldError = (path: string, message: string) => new BadRequestException({ message: `invalid body: ${path}: ${message}`, details: { fields: [{ path, message }] } });

/**
 * `POST /event/aggregations` (ADR 0335): exact aggregates of the project's events matching the
 * listings' filter within the plan's look-back (with an audience filter `root` or a saved
 * `segment`, only those of the contacts it selects now): the most frequent types, sources or parameter values, events per
 * hour, day, week or month in a time zone, and stats of a number parameter.
 * Events count once however often they were delivered. Parameter values are contact data: shown
 * as the data mode and level allow (ADR 0121), a blocked project refused.
 */
@Injectable()
export class AggregateEvents {
  constructor(
    private readonly listing: EventListing,
    private readonly repository: EventAggregationsRepository,
  ) {}

  /** A filter the query compiler refuses (too large, say) is a 400, as in the count. */
  execute(command: AggregateEventsCommand): Promise<EventAggregations> {
    return filterErrorsAs400(() => this.aggregate(command));
  }

  private async aggregate({ principal, projectId, aggregations, version, root: asked, segment, ...filter }: AggregateEventsCommand): Promise<EventAggregations> {
    const mask = this.listing.mask(principal);
    const names = aggregations.map(defaultName);
    names.forEach((n, i) => {
      if (names.indexOf(n) !== i) throw fieldError(`aggregations[${i}].name`, `"${n}" is used twice: name the aggregations`);
    });
    const { contacts } = await this.listing.contacts(principal, projectId, { version, root: asked, segment });
    const resolved = await this.listing.resolve(principal, projectId, filter);
    const scope: EventScope = { projectId, eventType: resolved.eventType, dataSourceId: resolved.dataSourceId, range: resolved.range, contacts };
    const inScope = await this.repository.scope(scope);
    aggregations.forEach((a, i) => {
      if (a.type !== 'date_histogram' || !inScope.events) return;
      const buckets = Math.floor((inScope.last - inScope.first) / SHORTEST_BUCKET_S[a.interval]) + 1;
      if (buckets > MAX_BUCKETS) throw fieldError(`aggregations[${i}].interval`, `the events span up to ${buckets} ${a.interval}s, more than ${MAX_BUCKETS} buckets: narrow dateFrom and dateTo or take a wider interval`);
    });
    let projectZone: Promise<string> | undefined;
    // Canonical names only (the schema checked `asked`): ClickHouse's zone lookup is case-sensitive.
    const zoneOf = async (asked: string | undefined) =>
      asked !== undefined ? (canonicalTimeZone(asked) ?? 'UTC') : (projectZone ??= this.repository.projectTimeZone(projectId).then((tz) => canonicalTimeZone(tz) ?? 'UTC'));
    // Read when first needed and awaited there, so a failed read is never an unhandled rejection.
    let sourceUids: Promise<Map<string, string>> | undefined;
    const uidsOf = () => (sourceUids ??= this.repository.dataSourceUids(projectId));

    const results = await Promise.all(
      aggregations.map(async (a, i): Promise<Result> => {
        const name = names[i];
        if (a.type === 'stats') {
          const s = await this.repository.stats(scope, a.parameter);
          const num = (x: number | null) => (x === null ? null : Number(x));
          return { name, type: 'stats', parameter: a.parameter, count: Number(s.count), min: num(s.min), max: num(s.max), avg: num(s.avg), sum: num(s.sum) };
        }
        if (a.type === 'date_histogram') {
          const timeZone = await zoneOf(a.timeZone);
          const buckets = inScope.events ? await this.repository.histogram(scope, a.interval, timeZone, inScope.first, inScope.last) : [];
          return { name, type: 'date_histogram', interval: a.interval, timeZone, buckets: buckets.map((b) => ({ date: isoInZone(new Date(b.start * 1000), timeZone), count: b.n })) };
        }
        if (a.field === 'parameter') {
          const key = a.parameter!;
          const [withValue, rows] = await Promise.all([this.repository.withParameter(scope, key), this.repository.parameterTerms(scope, key, a.size)]);
          // Values as sent (stored JSON-encoded), through the caller's mask.
          const buckets = maskedBuckets(rows.map((r) => ({ value: parameterValue(r.value), count: Number(r.n) })), mask);
          return { name, type: 'terms', field: a.field, parameter: key, withValue, missing: inScope.events - withValue, buckets };
        }
        const rows = await this.repository.terms(scope, a.field === 'eventType' ? 'event_type' : 'data_source_id', a.size);
        const uids = a.field === 'datasource' ? await uidsOf() : undefined;
        const buckets = rows.map((r) => ({ value: uids?.get(r.value) ?? r.value, count: Number(r.n) }));
        return { name, type: 'terms', field: a.field, withValue: inScope.events, missing: 0, buckets };
      }),
    );
    return { metadata: { events: inScope.events, ...this.listing.window(resolved), aggregations: results } };
  }
}

function defaultName(a: Asked): string {
  if (a.name !== undefined) return a.name;
  if (a.type === 'stats') return `stats_${a.parameter}`;
  if (a.type === 'date_histogram') return `date_histogram_${a.interval}`;
  return `terms_${a.field === 'parameter' ? a.parameter : a.field}`;
}
