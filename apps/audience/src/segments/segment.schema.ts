import { entityOnly, listEnvelope, timestamp, unstorableText } from '@meld/api';
import { AUDIENCE_FILTER_VERSION } from '@meld/filters';
import { z } from 'zod';

/** `{version, root}`: the audience filter of system.md §4, checked against the project catalogue when written. */
export const SegmentFilterSchema = z
  .strictObject({
    version: z.string().optional().describe(`audience filter version: \`${AUDIENCE_FILTER_VERSION}\` (the only one; the default)`),
    root: z.unknown().describe('audience filter root: a `group`, `attribute_condition`, `group_event` or `event_condition` node'),
  })
  .refine((f) => f.root !== undefined, { message: 'root is required', path: ['root'] })
  .meta({ id: 'SegmentFilter' });

/**
 * Text Postgres can store as sent: a lone surrogate (`\ud800` in JSON) would be written as U+FFFD,
 * a name other than the one sent, so it is the field's 400, as U+0000 is (libs/api storable-text).
 */
const storable = <T extends z.ZodString>(text: T) =>
  text.superRefine((value, ctx) => {
    const bad = unstorableText(value);
    if (bad) ctx.addIssue({ code: 'custom', message: bad });
  });
const name = storable(z.string().trim().min(1).max(200));
const description = storable(z.string().max(2000)).nullable();

export const CreateSegmentBody = z
  .strictObject({ name, description: description.optional(), filter: SegmentFilterSchema })
  .meta({ id: 'CreateSegmentBody' });
export type CreateSegmentInput = z.infer<typeof CreateSegmentBody>;

/** A partial update: only the fields sent change (`description: null` clears it). */
export const UpdateSegmentBody = z
  .strictObject({ name: name.optional(), description: description.optional(), filter: SegmentFilterSchema.optional() })
  .refine((b) => Object.keys(b).length > 0, { message: 'send at least one of name, description, filter' })
  .meta({ id: 'UpdateSegmentBody' });
export type UpdateSegmentInput = z.infer<typeof UpdateSegmentBody>;

export const SegmentSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    filter: z.object({ version: z.literal(AUDIENCE_FILTER_VERSION), root: z.unknown() }).describe('the audience filter as written'),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .meta({ id: 'Segment' });
export type Segment = z.infer<typeof SegmentSchema>;

export const SegmentReadSchema = entityOnly(SegmentSchema).meta({ id: 'SegmentRead' });
export const SegmentListSchema = listEnvelope(SegmentSchema, 'SegmentList');
