import { randomBytes } from 'node:crypto';
import { isoWithOffset, timestamp } from '@meld/api';
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { OrganizationsRepository } from '../../../organizations/organizations.repository';
import { found } from '../../../shared/found';
import { WebhooksRepository } from '../../webhooks.repository';
import type { SetSmsStatusWebhookCommand } from './set-sms-status-webhook.command';

export const WebhookSchema = z.object({ id: z.string(), kind: z.literal('sms-status'), url: z.string(), createdAt: timestamp() }).meta({ id: 'Webhook' });
export const WebhookSecretSchema = z.object({
  secret: z.string().optional().describe('present when Meld generated the secret: shown once'),
});

/**
 * Delivery reports are signed (system design §4), so a webhook always has a secret: the
 * given one, else the current one, else a generated one returned once in `metadata.secret`.
 * A generated secret is a Standard Webhooks secret (`whsec_` and standard base64), so the
 * `standardwebhooks` library verifies with it as given (ADR 0155).
 */
@Injectable()
export class SetSmsStatusWebhook {
  constructor(
    private readonly organizations: OrganizationsRepository,
    private readonly webhooks: WebhooksRepository,
  ) {}

  async execute({ organizationId, url, secret }: SetSmsStatusWebhookCommand) {
    const organization = found(await this.organizations.findById(organizationId), 'organization', organizationId);
    const current = await this.webhooks.find(organization.id, 'sms-status');
    const generated = (secret ?? current?.secret) ? undefined : `whsec_${randomBytes(24).toString('base64')}`;
    const webhook = await this.webhooks.upsert(organization.id, 'sms-status', url, (secret ?? current?.secret ?? generated) as string);
    return {
      entity: { id: webhook.id, kind: 'sms-status' as const, url: webhook.url, createdAt: isoWithOffset(webhook.createdAt) },
      metadata: generated ? { secret: generated } : {},
    };
  }
}
