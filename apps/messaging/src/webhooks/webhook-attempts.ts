import { metricsRegistry } from '@meld/platform';
import { Counter } from 'prom-client';

/** Every attempt of a delivery report, the outbox's first ones (ADR 0323) and the pump's retries (ADR 0252). */
export const webhookAttempts = new Counter({
  name: 'meld_messaging_webhook_attempts_total',
  help: 'Delivery-report webhook attempts by result (delivered, retry, failed)',
  labelNames: ['result'],
  registers: [metricsRegistry],
});

/** Reports are always signed; the column allows no secret, so an attempt says what to fix. */
export const NO_SECRET = 'the webhook has no secret: set one with PUT /admin/v1/organizations/{org}/webhooks/sms-status';
