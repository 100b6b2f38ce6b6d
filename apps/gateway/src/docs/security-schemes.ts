import { ALL_SCOPES, type Scope } from '@meld/contracts';

/** What each scope grants (product spec, Authentication; the two ingest scopes are ours). */
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  PROJECT_DATASOURCE_READ: 'read data sources',
  PROJECT_DATASOURCE_WRITE: 'create and modify data sources',
  ACCOUNT_READ: 'organization account details and funds',
  PROJECT_AUDIENCE_READ: 'read audience contacts',
  PROJECT_AUDIENCE_WRITE: 'write audience contacts',
  PROJECT_AUDIENCE_LIST: 'endpoints returning lists of contacts (scroll and search); plan-gated',
  PROJECT_AUDIENCE_DATA_BASIC: 'basic contact data; plan-gated',
  PROJECT_AUDIENCE_DATA_FULL: 'full contact data; granted manually by the operator',
  PROJECT_AUDIENCE_DATA_EVENTS: 'any event-related data; plan-gated',
  PROJECT_AGGREGATIONS: 'audience and event aggregations; granted manually',
  PROJECT_CAMPAIGN_READ: 'read campaigns',
  PROJECT_AUTOMATION_READ: 'read automations',
  PROJECT_DIRECT_READ: 'messaging read',
  PROJECT_DIRECT_WRITE: 'messaging write; required to create direct SMS',
  PROJECT_INGEST_WRITE: 'write contacts and events to any data source of the token projects',
  PROJECT_INGEST_READ: 'read stream metadata and specs of any data source of the token projects',
};

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
          scopes: Object.fromEntries(ALL_SCOPES.map((s) => [s, SCOPE_DESCRIPTIONS[s]])),
        },
      },
    },
    admin: { type: 'http', scheme: 'bearer', description: 'The operator token, `MELD_ADMIN_TOKEN` (local default `meld-dev-admin`, loopback only).' },
  };
}
