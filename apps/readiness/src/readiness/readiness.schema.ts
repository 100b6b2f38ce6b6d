import { entityOnly } from '@meld/api';
import { z } from 'zod';
import { CHANNELS, STEP_KEYS, WARNING_KEYS } from './readiness-rules';

const StepSchema = z
  .object({
    key: z
      .enum(STEP_KEYS)
      .describe(
        'stable: `import` at least one audience contact (not a blocker: a direct SMS can create its contact); `channels` an active SMS sender or RCS agent; `legal_profile` the legal profile is verified; `add_sender` / `add_agent` an active sender of the channel; `funds` a prepaid organization holds funds above zero (disabled for the others)',
      ),
    completed: z.boolean(),
    isBlocker: z.boolean().describe('the project cannot send until it is completed'),
    disabled: z.boolean().describe('does not apply to this project: counts for nothing and blocks nothing'),
  })
  .meta({ id: 'ReadinessStep' });

const WarningRowSchema = z.object({
  senderId: z.string(),
  senderName: z.string(),
  country: z.string().nullable().describe('ISO 3166-1 alpha-2; null on a row about the sender as a whole'),
  effectiveStatus: z.string().describe("the country's regulation-aware status, or on a sender-wide row the sender's status"),
});

const WarningSchema = z
  .object({
    key: z
      .enum(WARNING_KEYS)
      .describe(
        'stable: `sender_not_effective` carriers accept an active sender in a country where its effective status is not active (rows per country); `default_sender_not_active` the project default SMS sender is not active, so sends to `default` fail; `sender_reaches_no_country` an active sender that no country accepts; `no_default_sms_sender` active SMS senders exist but none is the default (rows: the candidates); `sender_without_price` an accepted country of an active sender has no price (0)',
      ),
    severity: z.enum(['warning', 'info']),
    count: z.int().min(1).describe('number of rows'),
    rows: z.array(WarningRowSchema).describe('sorted by sender name, sender id, country'),
  })
  .meta({ id: 'ReadinessWarning' });

export const ReadinessReportSchema = z
  .object({
    scope: z.enum(['project', 'channel']),
    channel: z.enum(CHANNELS).nullable(),
    percent: z.int().min(0).max(100).describe('completed over not-disabled steps, rounded down'),
    operational: z.boolean().describe('every blocker step is completed'),
    steps: z.array(StepSchema),
    warnings: z.array(WarningSchema).describe('only warnings that hold, in a fixed key order'),
    reach: z
      .object({
        reachableCountries: z.array(z.string()).describe("countries accepted by the carriers of the channel's active senders, deduplicated and sorted"),
        senders: z.record(z.string(), z.array(z.string())).describe('sender alias (the SMS `from`, or the RCS agent name) → its sorted countries; senders reaching no country are omitted'),
      })
      .nullable()
      .describe('channel scope only; null on project scope'),
  })
  .meta({ id: 'ReadinessReport' });

export const ReadinessResponseSchema = entityOnly(ReadinessReportSchema).meta({ id: 'Readiness' });
