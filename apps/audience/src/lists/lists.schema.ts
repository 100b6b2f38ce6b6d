import { envelope } from '@meld/api';
import { z } from 'zod';
import { AudienceContactSchema } from '../contacts/contact-read.schema';
import { audienceSelectionFields } from '../segments/audience-selection.schema';

/** Most contacts one page returns, most a search may reach (`from + size`, as Elasticsearch's default window), most sort keys. */
export const LIST_LIMITS = { scrollSize: 1000, searchSize: 100, searchWindow: 10_000, sortKeys: 3 } as const;

const selection = audienceSelectionFields('the whole audience');

export const ScrollAudienceBody = z
  .strictObject({
    ...selection,
    size: z.int().min(1).max(LIST_LIMITS.scrollSize).default(100).describe(`contacts per page, 1–${LIST_LIMITS.scrollSize} (default 100)`),
    scrollId: z.string().min(1).max(1000).optional().describe("the previous page's `metadata.scrollId`, sent with the same `version` and `root` (or `segment`); absent: the first page"),
  })
  .meta({ id: 'AudienceScrollRequest' });

export const SearchAudienceBody = z
  .strictObject({
    ...selection,
    from: z.int().min(0).default(0).describe('contacts to skip (default 0)'),
    size: z.int().min(1).max(LIST_LIMITS.searchSize).default(20).describe(`contacts to return, 1–${LIST_LIMITS.searchSize} (default 20)`),
    sort: z
      .array(
        z.strictObject({
          attribute: z.string().min(1).max(200).describe('a single-valued attribute uid of the catalogue'),
          order: z.enum(['asc', 'desc']).default('asc').describe('`asc` (default) or `desc`'),
        }),
      )
      .min(1)
      .max(LIST_LIMITS.sortKeys)
      .optional()
      .describe(
        `up to ${LIST_LIMITS.sortKeys} keys, the first deciding first: contacts without a value come after those with one in either order; ties keep the stable order of an unsorted search. Strings compare by their UTF-8 bytes. Absent: the stable order of an unsorted search`,
      ),
  })
  .refine((b) => b.from + b.size <= LIST_LIMITS.searchWindow, {
    message: `from + size may not exceed ${LIST_LIMITS.searchWindow}: use /audience/scroll to read further`,
    path: ['from'],
  })
  .meta({ id: 'AudienceSearchRequest' });

const contacts = z.array(AudienceContactSchema).describe('audience contacts as the caller may see them (data level and data mode), in a stable order');

export const AudienceScrollSchema = envelope(
  contacts,
  z.object({
    count: z.int().min(0).describe('contacts in this page'),
    scrollId: z.string().nullable().describe('send it back for the next page; null when this page is the last'),
  }),
).meta({ id: 'AudienceScroll' });

export const AudienceSearchSchema = envelope(
  contacts,
  z.object({
    from: z.int().min(0),
    size: z.int().min(1),
    count: z.int().min(0).describe('contacts in this page'),
    more: z.boolean().describe('whether contacts follow this page; the audience size is `/audience/count`\'s alone (probe rule 1)'),
  }),
).meta({ id: 'AudienceSearch' });
