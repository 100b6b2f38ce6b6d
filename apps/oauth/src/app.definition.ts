import { APPS } from '@meld/contracts';
import type { MeldAppDefinition } from '@meld/platform';
import { ClientDirectory } from './client-metadata/client-directory';
import { AuthorizeController } from './authorize/authorize.controller';
import { ConsentController } from './consent/consent.controller';
import { ConsentRepository } from './consent/consent.repository';
import { MetadataController } from './discovery/metadata.controller';
import { OAUTH_CONFIG, loadOAuthConfig } from './oauth-config';
import { RevokeEndpoint } from './protocol/revoke-endpoint';
import { TokenController } from './protocol/token.controller';
import { TokenEndpoint } from './protocol/token-endpoint';
import { RegisterClient } from './registration/register-client';
import { RegistrationController } from './registration/registration.controller';
import { OAuthRepository } from './storage/oauth.repository';

export const appDefinition: MeldAppDefinition = {
  name: 'oauth',
  port: APPS['oauth'].port,
  stores: APPS['oauth'].stores,
  controllers: [MetadataController, RegistrationController, AuthorizeController, ConsentController, TokenController],
  providers: [{ provide: OAUTH_CONFIG, useFactory: () => loadOAuthConfig() }, OAuthRepository, ClientDirectory, ConsentRepository, TokenEndpoint, RevokeEndpoint, RegisterClient],
};
