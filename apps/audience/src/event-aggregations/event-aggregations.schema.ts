import { canonicalTimeZone, timestamp } from '@meld/api';
import { z } from 'zod';
import { EVENT_FILTER, EVENT_WINDOW } from '../event-lists/event-lists.schema';
import { audienceSelectionFields } from '../segments/audience-selection.schema';

export const MAX_EVENT_AGGREGATIONS = 10;
export const MAX_EVENT_TERMS = 100;
/** Buckets a histogram may return: an hour's over the longest look-back (365 days) fits. */
export const MAX_BUCKETS = 10_000;

const name = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ or -, at most 64').optional().describe('default `<type>_<field, parameter or interval>`; unique in the request');
const parameter = z.string().min(1).max(200).describe('event parameter name');
const timeZone = z
  .string()
  .min(1)
  .max(64)
  .refine((tz) => canonicalTimeZone(tz) !== null, 'not an IANA time zone (for example Europe/Paris)')
  .optional()
  .describe("IANA time zone the buckets start in (days at local midnight); default: the project's timezone");

const Terms = z
  .strictObject({
    type: z.literal('terms'),
    name,
    field: z.enum(['eventType', 'datasource', 'parameter']).describe('what to bucket by: the event type, the data source (its uid), or the value of `parameter`'),
    parameter: parameter.optional().describe('the parameter whose values are bucketed; with `field` `parameter` only'),
    size: z.int().min(1).max(MAX_EVENT_TERMS).default(10).describe(`values listed, 1–${MAX_EVENT_TERMS} (default 10)`),
  })
  .superRefine((t, ctx) => {
    if (t.field === 'parameter' && t.parameter === undefined) ctx.addIssue({ code: 'custom', path: ['parameter'], message: 'required with field "parameter"' });
    if (t.field !== 'parameter' && t.parameter !== undefined) ctx.addIssue({ code: 'custom', path: ['parameter'], message: 'only with field "parameter"' });
  });

const Aggregation = z.discriminatedUnion('type', [
  Terms,
  z.strictObject({
    type: z.literal('date_histogram'),
    name,
    interval: z.enum(['hour', 'day', 'week', 'month']).describe('bucket width; weeks start on Monday'),
    timeZone,
  }),
  z.strictObject({ type: z.literal('stats'), name, parameter: parameter.describe('a parameter with number values (other values are not counted)') }),
]);

export const AggregateEventsBody = z
  .strictObject({
    ...EVENT_FILTER,
    ...audienceSelectionFields("every event; with either, only the events of the contacts selected now"),
    aggregations: z.array(Aggregation).min(1).max(MAX_EVENT_AGGREGATIONS).describe(`1–${MAX_EVENT_AGGREGATIONS} aggregations over the events matching the filter`),
  })
  .meta({ id: 'EventAggregationsRequest' });
export type AggregateEventsInput = z.infer<typeof AggregateEventsBody>;

const count = () => z.int().min(0);
const json = z.unknown().describe('the value as sent (string, number, boolean, array or object)');

const TermsResult = z.object({
  name: z.string(),
  type: z.literal('terms'),
  field: z.enum(['eventType', 'datasource', 'parameter']),
  parameter: z.string().optional(),
  withValue: count().describe('events matching the filter with a value (with the parameter; every event for the type and the source)'),
  missing: count().describe('events matching the filter without the parameter'),
  buckets: z.array(z.object({ value: json, count: count().describe('events with this value') })).describe('most frequent first, ties by value'),
});

const HistogramResult = z.object({
  name: z.string(),
  type: z.literal('date_histogram'),
  interval: z.enum(['hour', 'day', 'week', 'month']),
  timeZone: z.string(),
  buckets: z
    .array(z.object({ date: timestamp().describe('start of the bucket, with its offset in `timeZone`'), count: count() }))
    .describe('oldest first, from the first event to the last, empty buckets included'),
});

const StatsResult = z.object({
  name: z.string(),
  type: z.literal('stats'),
  parameter: z.string(),
  count: count().describe('events matching the filter whose parameter is a number'),
  min: z.number().nullable().describe('null without values'),
  max: z.number().nullable(),
  avg: z.number().nullable(),
  sum: z.number().nullable(),
});

export const EventAggregationsSchema = z
  .object({
    metadata: z.object({
      events: count().describe('events matching the filter, each counted once (deduplicated by `_event_id`)'),
      ...EVENT_WINDOW,
      aggregations: z.array(z.discriminatedUnion('type', [TermsResult, HistogramResult, StatsResult])).describe('in the order asked'),
    }),
  })
  .meta({ id: 'EventAggregations' });
export type EventAggregations = z.infer<typeof EventAggregationsSchema>;

