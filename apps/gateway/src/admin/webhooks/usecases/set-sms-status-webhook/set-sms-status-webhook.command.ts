import { z } from 'zod';

export const SetSmsStatusWebhookBody = z
  .strictObject({
    url: z.url({ protocol: /^https?$/ }).max(2000).describe('receives POST JSON delivery reports: each status change of a direct SMS after its initial `enqueued` (ADR 0351)'),
    // Printable ASCII only (ADR 0155): the standardwebhooks library's `format: 'raw'` takes one byte per
    // character, so a receiver could not verify a secret with other characters, which Meld signs as UTF-8.
    secret: z
      .string()
      .min(16)
      .max(200)
      .regex(/^[\x20-\x7e]+$/, 'must be printable ASCII characters')
      .optional()
      .describe('HMAC key of the Meld-Signature header (printable ASCII); kept when omitted, generated for a new webhook'),
  })
  .meta({ id: 'SetSmsStatusWebhookBody' });

export type SetSmsStatusWebhookCommand = z.infer<typeof SetSmsStatusWebhookBody> & { organizationId: string };
