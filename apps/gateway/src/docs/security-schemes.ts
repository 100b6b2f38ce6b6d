import { PRODUCT_SCOPES, SCOPE_DESCRIPTIONS } from '@meld/contracts';

export const BEARER = 'bearer';
export const OAUTH2 = 'oauth2';

/** The two schemes of the product spec (bearer token, OAuth 2) and the operator's admin token. */
export function securitySchemes() {
  return {
    [BEARER]: {
      type: 'http',
      scheme: 'bearer',
      description: 'A product token (`mld_pt_…`, from the admin API or project settings) or a data-source token (`mld_ds_…`, stream endpoints of its data source only).',
    },
    [OAUTH2]: {
      type: 'oauth2',
      description: 'OAuth 2.1 authorization code with PKCE (S256): a third-party application acting for a user.',
      flows: {
        authorizationCode: {
          authorizationUrl: '/oauth/authorize',
          tokenUrl: '/oauth/token',
          refreshUrl: '/oauth/token',
          // What /oauth/authorize grants and discovery's `scopes_supported` lists: ingest scopes belong to data-source and product tokens only.
          scopes: Object.fromEntries(PRODUCT_SCOPES.map((s) => [s, SCOPE_DESCRIPTIONS[s]])),
        },
      },
    },
    admin: { type: 'http', scheme: 'bearer', description: 'The operator token, `MELD_ADMIN_TOKEN` (local default `meld-dev-admin`, loopback only).' },
  };
}
