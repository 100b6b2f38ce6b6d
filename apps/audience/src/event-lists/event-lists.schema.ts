import { envelope, timestamp } from '@meld/api';
import { z } from 'zod';
import { AudienceEventSchema } from '../events/events.schema';
import { LIST_LIMITS } from '../lists/lists.schema';
import { audienceSelectionFields } from '../segments/audience-selection.schema';

const selection = audienceSelectionFields('every event; with either, only the events of the contacts selected now (through their current source contacts)');

/** The filter of event listings and aggregations (ADR 0332, 0335). */
export const EVENT_FILTER = {
  eventType: z.string().min(1).max(200).optional().describe('event type uid; absent: every type'),
  datasource: z.string().min(1).max(200).optional().describe('data source uid or id: events it produced; absent: every source'),
  dateFrom: z.iso.datetime({ offset: true }).optional().describe("oldest event date listed (ISO 8601); never before the plan's look-back (`metadata.since`)"),
  dateTo: z.iso.datetime({ offset: true }).optional().describe('event dates before this one (ISO 8601, exclusive); default: a day from now'),
};

export const ScrollEventsBody = z
  .strictObject({
    ...EVENT_FILTER,
    ...selection,
    size: z.int().min(1).max(LIST_LIMITS.scrollSize).default(100).describe(`events per page, 1–${LIST_LIMITS.scrollSize} (default 100)`),
    scrollId: z.string().min(1).max(4096).optional().describe("the previous page's `metadata.scrollId`, sent with the same filter; absent: the first page"),
  })
  .meta({ id: 'EventScrollRequest' });

export const SearchEventsBody = z
  .strictObject({
    ...EVENT_FILTER,
    ...selection,
    from: z.int().min(0).default(0).describe('events to skip (default 0)'),
    size: z.int().min(1).max(LIST_LIMITS.searchSize).default(20).describe(`events to return, 1–${LIST_LIMITS.searchSize} (default 20)`),
  })
  .refine((b) => b.from + b.size <= LIST_LIMITS.searchWindow, { message: `from + size may not exceed ${LIST_LIMITS.searchWindow}: use /event/scroll to read further`, path: ['from'] })
  .meta({ id: 'EventSearchRequest' });

export const ListedEventSchema = AudienceEventSchema.extend({
  userId: z.string().describe('`_user_id` of the source contact that produced it'),
  audienceId: z.string().nullable().describe('the audience contact that source contact belongs to now; null when none (deleted, or not merged yet)'),
}).meta({ id: 'ListedEvent' });

/** What a response says of the dates it read. */
export const EVENT_WINDOW = {
  lookBackDays: z.int().describe("days of history the organization's plan allows: s 30, m 90, l 180, xl 365"),
  since: timestamp().describe('oldest event date listed'),
  until: timestamp().describe('event dates before this one are listed'),
};

export const EventScrollSchema = envelope(
  z.array(ListedEventSchema).describe('oldest first (event date, then id)'),
  z.object({ count: z.int().min(0), scrollId: z.string().nullable().describe('send it back for the next page; null when this page is the last'), ...EVENT_WINDOW }),
).meta({ id: 'EventScroll' });

export const EventSearchSchema = envelope(
  z.array(ListedEventSchema).describe('newest first (event date, then id)'),
  z.object({ from: z.int().min(0), size: z.int().min(1), count: z.int().min(0), more: z.boolean().describe('whether events follow this page'), ...EVENT_WINDOW }),
).meta({ id: 'EventSearch' });
