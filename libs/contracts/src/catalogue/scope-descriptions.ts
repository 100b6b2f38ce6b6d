import type { Scope } from './scopes';

/**
 * What each scope grants (product spec, Authentication; the two ingest scopes are ours).
 * One text for the OpenAPI document and the OAuth consent screen.
 */
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
