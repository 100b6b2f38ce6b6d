import { z } from 'zod';
import { COMPLIANCE_MODES, FilterComplianceSchema } from './compliance';

export const CountAudienceBody = z
  .strictObject({
    version: z.unknown().optional().describe('audience filter version: `0.0.1` (the only one)'),
    root: z
      .unknown()
      .optional()
      .describe(
        'audience filter root (system design §4): a `group` {operator and|or, negate?, children[]}, `attribute_condition` {key, operator, values[]}, `group_event` or `event_condition` node; absent: the whole audience',
      ),
    filterCompliance: FilterComplianceSchema.optional(),
  })
  .meta({ id: 'AudienceCountRequest' });

const count = () => z.int().min(0);
const ChannelComplianceSchema = z
  .object({
    mode: z.enum(COMPLIANCE_MODES).describe('the mode asked for this channel'),
    reachable: count().describe('contacts matching the root that meet the mode on this channel (basic: optedIn + optedOut + noConsent; opt-out: optedIn + noConsent; opt-in: optedIn)'),
    optedIn: count().describe('with an address for the channel, not suppressed, opted in (`_consent_<channel>` opt-in, or an opt-in the marketing scopes extend to it, ADR 0347)'),
    optedOut: count().describe('with an address for the channel, not suppressed, opted out (on it, or on a channel whose marketingOptOutScope is all_channels)'),
    noConsent: count().describe('with an address for the channel, not suppressed, no consent statement'),
    suppressed: count().describe('with an address for the channel, suppressed on it whatever the consent (the number is on the project\'s suppression list: the carrier said it is invalid, or an operator listed it; ADR 0361)'),
    noValidAddress: count().describe('no valid address for the channel (a valid mobile for sms, rcs, whatsapp; a valid email for email)'),
  })
  .describe('the contacts matching the root on this channel alone: optedIn + optedOut + noConsent + suppressed + noValidAddress = contacts matching the root')
  .meta({ id: 'AudienceCountCompliance' });

export const AudienceCountSchema = z
  .object({
    metadata: z.object({
      totalHits: count().describe('current audience contacts matching the root and every requested channel filter; exact and live, never sampled'),
      compliance: z
        .object({ sms: ChannelComplianceSchema.optional(), email: ChannelComplianceSchema.optional(), rcs: ChannelComplianceSchema.optional(), whatsapp: ChannelComplianceSchema.optional() })
        .optional()
        .describe('per channel named in filterCompliance'),
    }),
  })
  .meta({ id: 'AudienceCount' });
