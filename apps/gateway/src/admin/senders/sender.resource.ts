import { type SenderCountryEntity, type SenderEntity } from '@meld/db';
import { isoWithOffset, timestamp } from '@meld/api';
import { z } from 'zod';

export const SENDER_STATUSES = ['active', 'pending', 'inactive'] as const;
/** Regulation-aware status per country; readiness warns where carriers accept a sender that is not `active` here. */
export const EFFECTIVE_STATUSES = ['active', 'pending', 'restricted', 'blocked'] as const;

export const SenderSchema = z
  .object({
    id: z.string(),
    channel: z.enum(['sms', 'rcs']),
    alias: z.string().describe('the `from` of an SMS, or the RCS agent name'),
    name: z.string(),
    status: z.enum(SENDER_STATUSES),
    countries: z.array(z.object({ country: z.string(), accepted: z.boolean(), effectiveStatus: z.enum(EFFECTIVE_STATUSES), price: z.number() })),
    acceptedCountries: z.array(z.string()).describe('countries whose carriers accept the sender, sorted'),
    createdAt: timestamp(),
  })
  .meta({ id: 'Sender' });

export function toSenderResource(s: SenderEntity, countries: SenderCountryEntity[]): z.infer<typeof SenderSchema> {
  return {
    id: s.id,
    channel: s.channel,
    alias: s.alias,
    name: s.name,
    status: s.status as z.infer<typeof SenderSchema>['status'],
    countries: countries.map((c) => ({ country: c.country, accepted: c.accepted, effectiveStatus: c.effectiveStatus as (typeof EFFECTIVE_STATUSES)[number], price: c.price })),
    acceptedCountries: countries.filter((c) => c.accepted).map((c) => c.country).sort(),
    createdAt: isoWithOffset(s.createdAt),
  };
}
