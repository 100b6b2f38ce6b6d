import { ATTRIBUTE_TYPES, EVENT_CATEGORIES } from '@meld/contracts';
import { z } from 'zod';

/** No dots: filters address parameters as `<event_type_uid>.<parameter>`. */
const KEY = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
const KEY_RULE = 'must start with a letter; letters, digits, _ or -, at most 64 (no dots: filters use `type.parameter`)';

export const EventParameterInput = z
  .strictObject({
    parameter: z.string().regex(KEY, KEY_RULE),
    title: z.string().trim().min(1).max(200),
    dataType: z.enum(ATTRIBUTE_TYPES),
    required: z.boolean().default(false),
    multiValue: z.int().min(1).max(1000).default(1).describe('most values the parameter may carry; 1 means single-valued'),
    maxLength: z.int().min(1).max(65535).nullable().default(null).describe('strings only'),
  })
  .refine((p) => p.maxLength === null || p.dataType === 'string', { message: 'maxLength applies to string parameters only', path: ['maxLength'] });

export const CreateEventTypeBody = z
  .strictObject({
    uid: z.string().regex(KEY, KEY_RULE),
    name: z.string().trim().min(1).max(200),
    category: z.enum(EVENT_CATEGORIES),
    attribution: z.boolean().default(false),
    automation: z.boolean().default(false),
    important: z.boolean().default(false),
    retentionDays: z.int().min(1).max(3650).nullable().default(null).describe("days events of this type are kept; null follows the plan's look-back"),
    parameters: z.array(EventParameterInput).max(100).default([]),
  })
  .superRefine((body, ctx) => {
    const seen = new Set<string>();
    body.parameters.forEach((p, i) => {
      if (seen.has(p.parameter)) ctx.addIssue({ code: 'custom', path: ['parameters', i, 'parameter'], message: `"${p.parameter}" is declared twice` });
      seen.add(p.parameter);
    });
  })
  .meta({ id: 'CreateEventTypeBody' });

export type CreateEventTypeCommand = z.infer<typeof CreateEventTypeBody> & { projectUid: string };
