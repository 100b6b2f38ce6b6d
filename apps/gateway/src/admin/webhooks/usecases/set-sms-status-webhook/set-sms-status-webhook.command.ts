import { z } from 'zod';

export const SetSmsStatusWebhookBody = z
  .strictObject({
    url: z.url({ protocol: /^https?$/ }).max(2000).describe('receives POST JSON delivery reports: each status change of a direct SMS after its initial `enqueued` (ADR 0351)'),
    secret: z.string().min(16).max(200).optional().describe('HMAC key of the Meld-Signature header; kept when omitted, generated for a new webhook'),
  })
  .meta({ id: 'SetSmsStatusWebhookBody' });

export type SetSmsStatusWebhookCommand = z.infer<typeof SetSmsStatusWebhookBody> & { organizationId: string };
