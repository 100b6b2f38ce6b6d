import { ApiPostgresUnavailable, ApiTags, envelope } from '@meld/api';
import { Controller, Param, Put, UseGuards } from '@nestjs/common';
import { AdminOperation } from '../http/admin-docs';
import { AdminTokenGuard } from '../http/admin-token.guard';
import { JsonBody } from '../http/json-body';
import { SetSmsStatusWebhookBody, type SetSmsStatusWebhookCommand } from './usecases/set-sms-status-webhook/set-sms-status-webhook.command';
import { SetSmsStatusWebhook, WebhookSchema, WebhookSecretSchema } from './usecases/set-sms-status-webhook/set-sms-status-webhook.usecase';

@ApiTags('admin')
@UseGuards(AdminTokenGuard)
@ApiPostgresUnavailable()
@Controller('admin/v1/organizations/:org/webhooks')
export class WebhooksController {
  constructor(private readonly setSmsStatusWebhook: SetSmsStatusWebhook) {}

  @Put('sms-status')
  @AdminOperation('Set the SMS delivery-report webhook of the organization', 200, envelope(WebhookSchema, WebhookSecretSchema), [400, 404])
  smsStatus(@Param('org') organizationId: string, @JsonBody(SetSmsStatusWebhookBody) body: Omit<SetSmsStatusWebhookCommand, 'organizationId'>) {
    return this.setSmsStatusWebhook.execute({ ...body, organizationId });
  }
}
