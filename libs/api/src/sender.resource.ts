import { z } from 'zod';
import { timestamp } from './envelope';
import { isoWithOffset } from './time';

/** Sender statuses (the admin API sets them; readiness and sends read them). */
export const SENDER_STATUSES = ['active', 'pending', 'inactive'] as const;
/** Regulation-aware status per country; readiness warns where carriers accept a sender that is not `active` there. */
export const EFFECTIVE_STATUSES = ['active', 'pending', 'restricted', 'blocked'] as const;

/**
 * A sender as the API shows it, to the operator (admin API) and to product tokens (the SMS and
 * RCS sender listings): one shape, declared once.
 */
export const SenderSchema = z
  .object({
    id: z.string(),
    channel: z.enum(['sms', 'rcs']),
    alias: z.string().describe('the `from` of an SMS, or the RCS agent name'),
    name: z.string(),
    status: z.enum(SENDER_STATUSES),
    countries: z
      .array(
        z.object({
          country: z.string().describe('ISO 3166-1 alpha-2'),
          accepted: z.boolean().describe("the country's carriers accept the sender"),
          effectiveStatus: z.enum(EFFECTIVE_STATUSES).describe('regulation-aware status in the country'),
          price: z.number().describe('price per SMS part'),
        }),
      )
      .describe('sorted by country'),
    acceptedCountries: z.array(z.string()).describe('countries whose carriers accept the sender, sorted'),
    createdAt: timestamp(),
  })
  .meta({ id: 'Sender' });
export type SenderResource = z.infer<typeof SenderSchema>;

export interface SenderFields {
  id: string;
  channel: 'sms' | 'rcs';
  alias: string;
  name: string;
  status: string;
  createdAt: Date;
}
export interface SenderCountryFields {
  country: string;
  accepted: boolean;
  effectiveStatus: string;
  /** numeric from Postgres arrives as a string when read with raw SQL. */
  price: number | string;
}

/** The resource of a sender and its country rows (any order: sorted here). */
export function toSenderResource(s: SenderFields, countries: readonly SenderCountryFields[]): SenderResource {
  const sorted = [...countries].sort((a, b) => (a.country < b.country ? -1 : a.country > b.country ? 1 : 0));
  return {
    id: s.id,
    channel: s.channel,
    alias: s.alias,
    name: s.name,
    status: s.status as SenderResource['status'],
    countries: sorted.map((c) => ({ country: c.country, accepted: c.accepted, effectiveStatus: c.effectiveStatus as SenderResource['countries'][number]['effectiveStatus'], price: Number(c.price) })),
    acceptedCountries: sorted.filter((c) => c.accepted).map((c) => c.country),
    createdAt: isoWithOffset(s.createdAt),
  };
}
