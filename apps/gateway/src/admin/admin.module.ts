import { CatalogueRepository } from '@meld/db';
import { Module } from '@nestjs/common';
import { CatalogueAdminRepository } from './catalogue/catalogue-admin.repository';
import { CatalogueController } from './catalogue/catalogue.controller';
import { CreateAttribute } from './catalogue/usecases/create-attribute/create-attribute.usecase';
import { CreateEventType } from './catalogue/usecases/create-event-type/create-event-type.usecase';
import { DataSourcesController } from './datasources/datasources.controller';
import { DataSourcesRepository } from './datasources/datasources.repository';
import { CreateDataSource } from './datasources/usecases/create-data-source/create-data-source.usecase';
import { IssueDataSourceToken } from './datasources/usecases/issue-data-source-token/issue-data-source-token.usecase';
import { ListDataSources } from './datasources/usecases/list-data-sources/list-data-sources.usecase';
import { ADMIN_CONFIG, loadAdminConfig } from './http/admin-config';
import { ADMIN_LIMITS, loadAdminLimits } from './http/admin-limits';
import { AdminTokenGuard } from './http/admin-token.guard';
import { OAuthGrantsController } from './oauth-grants/oauth-grants.controller';
import { OAuthGrantsRepository } from './oauth-grants/oauth-grants.repository';
import { ListOAuthGrants } from './oauth-grants/usecases/list-oauth-grants/list-oauth-grants.usecase';
import { DeleteOAuthClient } from './oauth-grants/usecases/delete-oauth-client/delete-oauth-client.usecase';
import { RevokeOAuthGrant } from './oauth-grants/usecases/revoke-oauth-grant/revoke-oauth-grant.usecase';
import { OrganizationsController } from './organizations/organizations.controller';
import { OrganizationsRepository } from './organizations/organizations.repository';
import { CreateOrganization } from './organizations/usecases/create-organization/create-organization.usecase';
import { GetOrganization } from './organizations/usecases/get-organization/get-organization.usecase';
import { UpdateOrganization } from './organizations/usecases/update-organization/update-organization.usecase';
import { ProjectsController } from './projects/projects.controller';
import { ProjectsRepository } from './projects/projects.repository';
import { CreateProject } from './projects/usecases/create-project/create-project.usecase';
import { GetProject } from './projects/usecases/get-project/get-project.usecase';
import { ListProjects } from './projects/usecases/list-projects/list-projects.usecase';
import { SetLegalProfile } from './projects/usecases/set-legal-profile/set-legal-profile.usecase';
import { UpdateProject } from './projects/usecases/update-project/update-project.usecase';
import { ScopesController } from './scopes/scopes.controller';
import { SendersController } from './senders/senders.controller';
import { SendersRepository } from './senders/senders.repository';
import { CreateSender } from './senders/usecases/create-sender/create-sender.usecase';
import { UpdateSender } from './senders/usecases/update-sender/update-sender.usecase';
import { TenancyEvents } from './shared/tenancy-events';
import { SmsSuppressionsController } from './suppressions/sms-suppressions.controller';
import { SmsSuppressions } from './suppressions/sms-suppressions.usecase';
import { TokensController } from './tokens/tokens.controller';
import { TokensRepository } from './tokens/tokens.repository';
import { CreateToken } from './tokens/usecases/create-token/create-token.usecase';
import { ListTokens } from './tokens/usecases/list-tokens/list-tokens.usecase';
import { RevokeToken } from './tokens/usecases/revoke-token/revoke-token.usecase';
import { CreateUser } from './users/usecases/create-user/create-user.usecase';
import { DeleteUser } from './users/usecases/delete-user/delete-user.usecase';
import { UsersController } from './users/users.controller';
import { UsersRepository } from './users/users.repository';
import { SetSmsStatusWebhook } from './webhooks/usecases/set-sms-status-webhook/set-sms-status-webhook.usecase';
import { ListWebhookDeliveries } from './webhooks/usecases/list-webhook-deliveries/list-webhook-deliveries.usecase';
import { RetryWebhookDelivery } from './webhooks/usecases/retry-webhook-delivery/retry-webhook-delivery.usecase';
import { WebhookDeliveriesController } from './webhooks/webhook-deliveries.controller';
import { WebhookDeliveriesRepository } from './webhooks/webhook-deliveries.repository';
import { WebhooksController } from './webhooks/webhooks.controller';
import { WebhooksRepository } from './webhooks/webhooks.repository';

/** The operator API, `/admin/v1` (system design §3), guarded by MELD_ADMIN_TOKEN. */
@Module({
  controllers: [
    OrganizationsController,
    ProjectsController,
    DataSourcesController,
    TokensController,
    CatalogueController,
    SendersController,
    WebhooksController,
    WebhookDeliveriesController,
    SmsSuppressionsController,
    UsersController,
    OAuthGrantsController,
    ScopesController,
  ],
  providers: [
    { provide: ADMIN_CONFIG, useFactory: () => loadAdminConfig() },
    { provide: ADMIN_LIMITS, useFactory: () => loadAdminLimits() },
    AdminTokenGuard,
    TenancyEvents,
    CatalogueRepository,
    OrganizationsRepository,
    ProjectsRepository,
    DataSourcesRepository,
    TokensRepository,
    CatalogueAdminRepository,
    SendersRepository,
    UpdateSender,
    WebhooksRepository,
    WebhookDeliveriesRepository,
    UsersRepository,
    CreateOrganization,
    GetOrganization,
    UpdateOrganization,
    CreateProject,
    ListProjects,
    GetProject,
    UpdateProject,
    SetLegalProfile,
    CreateDataSource,
    ListDataSources,
    IssueDataSourceToken,
    CreateToken,
    ListTokens,
    RevokeToken,
    CreateEventType,
    CreateAttribute,
    CreateSender,
    SetSmsStatusWebhook,
    ListWebhookDeliveries,
    RetryWebhookDelivery,
    SmsSuppressions,
    CreateUser,
    DeleteUser,
    OAuthGrantsRepository,
    ListOAuthGrants,
    RevokeOAuthGrant,
    DeleteOAuthClient,
  ],
})
export class AdminModule {}
