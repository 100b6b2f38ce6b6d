/**
 * Every scope a token can carry. Product scopes are the spec's; the two ingest scopes
 * are ours (the spec leaves their names open): a product token with them may write to
 * and read the stream metadata of any data source of its projects.
 */
export const PRODUCT_SCOPES = [
  'PROJECT_DATASOURCE_READ',
  'PROJECT_DATASOURCE_WRITE',
  'ACCOUNT_READ',
  'PROJECT_AUDIENCE_READ',
  'PROJECT_AUDIENCE_WRITE',
  'PROJECT_AUDIENCE_LIST',
  'PROJECT_AUDIENCE_DATA_BASIC',
  'PROJECT_AUDIENCE_DATA_FULL',
  'PROJECT_AUDIENCE_DATA_EVENTS',
  'PROJECT_AGGREGATIONS',
  'PROJECT_CAMPAIGN_READ',
  'PROJECT_AUTOMATION_READ',
  'PROJECT_DIRECT_READ',
  'PROJECT_DIRECT_WRITE',
] as const;
export const INGEST_SCOPES = ['PROJECT_INGEST_WRITE', 'PROJECT_INGEST_READ'] as const;
export const ALL_SCOPES = [...PRODUCT_SCOPES, ...INGEST_SCOPES] as const;
export type Scope = (typeof ALL_SCOPES)[number];

export const PLANS = ['s', 'm', 'l', 'xl'] as const;
export type Plan = (typeof PLANS)[number];
/** Days of event history a plan keeps and reads (system design §4): event listings, event volumes and retention pruning. */
export const EVENTS_LOOK_BACK_DAYS: Readonly<Record<Plan, number>> = { s: 30, m: 90, l: 180, xl: 365 };
export const DATA_MODES = ['normal', 'anonymized', 'blocked'] as const;
export type DataMode = (typeof DATA_MODES)[number];

/** Strictest first: `GET /` reports the strictest mode across reachable projects. */
export function strictestDataMode(modes: DataMode[]): DataMode {
  return modes.includes('blocked') ? 'blocked' : modes.includes('anonymized') ? 'anonymized' : 'normal';
}
