import { isPhoneRegion } from '@meld/contracts';
import { z } from 'zod';
import { EFFECTIVE_STATUSES, SENDER_STATUSES } from '@meld/api';
import { decimalColumn } from '../../../shared/decimal';

export const SenderCountryInput = z.strictObject({
  // Matched against the destination number's country (ADR 0152): a code no number has (`UK`, `XX`) would make a sender that never sends (ADR 0014).
  country: z
    .string()
    .regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code, e.g. FR')
    .refine((code) => !/^[A-Z]{2}$/.test(code) || isPhoneRegion(code), { error: (issue) => `"${String(issue.input)}" is not a country code phone numbers belong to (ISO 3166-1 alpha-2, e.g. GB not UK)` }),
  accepted: z.boolean().default(true).describe('carriers of the country accept the sender'),
  effectiveStatus: z.enum(EFFECTIVE_STATUSES).default('active').describe('regulation-aware status in the country'),
  // sender_countries.price is numeric(10,5): at most 99999.99999, five decimals (ADR 0014).
  price: decimalColumn(10, 5, { min: 0 }).default(0).describe('price per SMS part: at most 99999.99999, five decimals'),
});

/** A sender's countries: each at most once. */
export const SenderCountriesInput = z
  .array(SenderCountryInput)
  .max(250)
  .superRefine((countries, ctx) => {
    const seen = new Set<string>();
    countries.forEach((c, i) => {
      if (seen.has(c.country)) ctx.addIssue({ code: 'custom', path: [i, 'country'], message: `"${c.country}" is listed twice` });
      seen.add(c.country);
    });
  });

export const CreateSenderBody = z
  .strictObject({
    channel: z.enum(['sms', 'rcs']),
    alias: z.string().trim().min(1).max(100).describe('the `from` of an SMS (number or alphanumeric), or the RCS agent name'),
    name: z.string().trim().min(1).max(200),
    status: z.enum(SENDER_STATUSES),
    countries: SenderCountriesInput.default([]),
  })
  .meta({ id: 'CreateSenderBody' });

export type CreateSenderCommand = z.infer<typeof CreateSenderBody> & { projectUid: string };
