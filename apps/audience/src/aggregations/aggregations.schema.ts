import { z } from 'zod';
import { audienceSelectionFields } from '../segments/audience-selection.schema';

export const MAX_AGGREGATIONS = 10;
export const MAX_TERMS = 100;

const name = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ or -, at most 64').optional().describe('default `<type>_<attribute>`; unique in the request');
const attribute = z.string().min(1).max(200).describe('attribute uid');

const Aggregation = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('terms'), name, attribute, size: z.int().min(1).max(MAX_TERMS).default(10).describe(`values listed, 1–${MAX_TERMS} (default 10)`) }),
  z.strictObject({ type: z.literal('stats'), name, attribute: attribute.describe('a single-valued number, date or datetime attribute') }),
]);

export const AggregateAudienceBody = z
  .strictObject({
    ...audienceSelectionFields('the whole audience'),
    aggregations: z.array(Aggregation).min(1).max(MAX_AGGREGATIONS).describe(`1–${MAX_AGGREGATIONS} aggregations over the contacts the root or segment selects`),
  })
  .meta({ id: 'AudienceAggregationsRequest' });
export type AggregateAudienceInput = z.infer<typeof AggregateAudienceBody>;

const count = () => z.int().min(0);
const value = z.union([z.string(), z.number(), z.boolean()]);

const TermsResult = z.object({
  name: z.string(),
  type: z.literal('terms'),
  attribute: z.string(),
  withValue: count().describe('contacts matching the root with at least one value'),
  missing: count().describe('contacts matching the root without a value'),
  buckets: z.array(z.object({ value, count: count().describe('contacts with this value') })).describe('most frequent first, ties by value'),
});

const StatsResult = z.object({
  name: z.string(),
  type: z.literal('stats'),
  attribute: z.string(),
  count: count().describe('contacts matching the root with a value'),
  min: z.union([z.number(), z.string()]).nullable().describe('a number, or an ISO date for date attributes; null without values'),
  max: z.union([z.number(), z.string()]).nullable(),
  avg: z.number().nullable().describe('numbers only'),
  sum: z.number().nullable().describe('numbers only'),
});

export const AudienceAggregationsSchema = z
  .object({
    metadata: z.object({
      matching: count().describe('current audience contacts matching the root: exact and live, as `/audience/count`'),
      aggregations: z.array(z.discriminatedUnion('type', [TermsResult, StatsResult])).describe('in the order asked'),
    }),
  })
  .meta({ id: 'AudienceAggregations' });
export type AudienceAggregations = z.infer<typeof AudienceAggregationsSchema>;
