// Listings of a project's events (ADR 0332): date-windowed pages over the events table.
export { audienceIdsOf, windowedEventsPage, type EventPage, type EventPageOptions, type EventPosition, type EventRow } from './event-page';
// Aggregations of a project's events (ADR 0335): exact, over the events deduplicated by id.
export {
  bucketProbes, bucketStarts, eventHistogramOf, eventsOfAudience, eventsInScope, eventsWithParameter, eventTermsOf, parameterStatsOf, parameterTermsOf, type EventScope, type HistogramInterval,
} from './event-aggregations';
