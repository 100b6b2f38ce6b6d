// Listings of a project's events (ADR 0332): date-windowed pages over the events table.
export { audienceIdsOf, windowedEventsPage, type EventPage, type EventPageOptions, type EventPosition, type EventRow } from './event-page';
