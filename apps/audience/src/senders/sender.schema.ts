import { isoWithOffset, listEnvelope, timestamp } from '@meld/api';
import { z } from 'zod';

/** A sender as the public listing shows it (the admin API creates them; ADR 0017 lists the values). */
export const PublicSenderSchema = z
  .object({
    id: z.string(),
    channel: z.enum(['sms', 'rcs']),
    alias: z.string().describe('the `from` of an SMS, or the RCS agent name'),
    name: z.string(),
    status: z.string().describe('active, pending or inactive'),
    countries: z
      .array(
        z.object({
          country: z.string().describe('ISO 3166-1 alpha-2'),
          accepted: z.boolean().describe("the country's carriers accept the sender"),
          effectiveStatus: z.string().describe('regulation-aware status: active, pending, restricted or blocked'),
          price: z.number().describe('price per SMS part'),
        }),
      )
      .describe('sorted by country'),
    acceptedCountries: z.array(z.string()).describe('countries whose carriers accept the sender, sorted'),
    createdAt: timestamp(),
  })
  .meta({ id: 'SenderListItem' });
export type PublicSender = z.infer<typeof PublicSenderSchema>;

export const SenderListSchema = listEnvelope(PublicSenderSchema, 'SenderList');

export interface SenderRow {
  id: string;
  channel: 'sms' | 'rcs';
  alias: string;
  name: string;
  status: string;
  createdAt: Date;
}
export interface SenderCountryRow {
  senderId: string;
  country: string;
  accepted: boolean;
  effectiveStatus: string;
  price: string;
}

export function toPublicSender(s: SenderRow, countries: SenderCountryRow[]): PublicSender {
  return {
    id: s.id,
    channel: s.channel,
    alias: s.alias,
    name: s.name,
    status: s.status,
    countries: countries.map((c) => ({ country: c.country, accepted: c.accepted, effectiveStatus: c.effectiveStatus, price: Number(c.price) })),
    acceptedCountries: countries.filter((c) => c.accepted).map((c) => c.country),
    createdAt: isoWithOffset(s.createdAt),
  };
}
