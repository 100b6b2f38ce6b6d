import { loadConfig } from '@meld/platform';
import { z } from 'zod';

export interface WebhookConfig {
  allowPrivate: boolean;
  timeoutMs: number;
  retryForMs: number;
  /** How long a delivered delivery is kept (ADR 0203). */
  deliveredRetentionMs: number;
}

/** The webhook settings of the environment (README configuration table). */
export function loadWebhookConfig(): WebhookConfig {
  const env = loadConfig(
    z.object({
      MELD_WEBHOOK_ALLOW_PRIVATE: z.enum(['0', '1']).default('0'),
      MELD_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
      MELD_WEBHOOK_RETRY_FOR_MS: z.coerce.number().int().min(0).max(7 * 86_400_000).default(86_400_000),
      MELD_WEBHOOK_DELIVERED_RETENTION_MS: z.coerce.number().int().min(60_000).default(7 * 86_400_000),
    }),
  );
  return {
    allowPrivate: env.MELD_WEBHOOK_ALLOW_PRIVATE === '1',
    timeoutMs: env.MELD_WEBHOOK_TIMEOUT_MS,
    retryForMs: env.MELD_WEBHOOK_RETRY_FOR_MS,
    deliveredRetentionMs: env.MELD_WEBHOOK_DELIVERED_RETENTION_MS,
  };
}

/** Exponential backoff between attempts: 1 s, 2 s, 4 s … at most an hour, each ±20 % so a recovering receiver is not hit by every sender at once. */
export function retryDelayMs(failedAttempts: number, random = Math.random): number {
  const base = Math.min(1000 * 2 ** Math.max(0, failedAttempts - 1), 3_600_000);
  return Math.round(base * (0.8 + 0.4 * random()));
}
