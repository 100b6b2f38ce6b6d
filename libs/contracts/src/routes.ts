import type { AppName } from './apps';
import type { Scope } from './catalogue/scopes';

/**
 * THE table of public routes. The gateway registers exactly these (anything else under
 * `/v1` is 404), checks tokens, project access and scopes from it, picks the rate-limit
 * class and forwards to `app`; the authorization-matrix e2e test is generated from it.
 * Adding a route here is the whole job on the gateway side (plus an example in the test
 * when it has a new path parameter or needs a body).
 */

export const TOKEN_KINDS = ['product', 'datasource', 'oauth'] as const;
export type TokenKindName = (typeof TOKEN_KINDS)[number];

/** `large` / `standard` / `probes` count per organization; `ingest` per data source and route. */
export const RATE_LIMIT_CLASSES = ['large', 'standard', 'probes', 'ingest'] as const;
export type RateLimitClass = (typeof RATE_LIMIT_CLASSES)[number];

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface PublicRoute {
  /** Stable name: rate-limit key of ingest routes, metrics, tests. */
  id: string;
  method: HttpMethod;
  /** Fastify/find-my-way pattern, public path == internal path (the owning app serves the same path). */
  path: string;
  /** Who answers; `gateway` routes are served by the gateway itself. */
  app: AppName;
  /** All of these are required (data-source tokens get the ingest scopes implicitly). */
  scopes: readonly Scope[];
  tokenKinds: readonly TokenKindName[];
  rateLimit: RateLimitClass;
  /** Path parameter holding the project UID: the token must reach that project (else 404). */
  projectParam?: string;
  /** Path parameter holding a data-source id of that project (else 404). */
  dataSourceParam?: string;
  /** Largest request body in bytes (413 above); default DEFAULT_BODY_LIMIT. */
  bodyLimit?: number;
}

/** Product reads carry small JSON filters at most. */
export const DEFAULT_BODY_LIMIT = 256 * 1024;
/** Ingest batches are at most 100 items; 10 KiB per item is generous for a contact or an event. */
export const INGEST_BODY_LIMIT = 1024 * 1024;

const PRODUCT = ['product', 'oauth'] as const;
/** The ingest spec names two kinds: data-source tokens and product tokens with the ingest scopes. */
const INGEST = ['datasource', 'product'] as const;
const STREAM = '/v1/project/:project/datasource/:datasource/stream';

const product = (id: string, method: HttpMethod, path: string, app: AppName, extra: Partial<PublicRoute> = {}): PublicRoute => ({
  id,
  method,
  path,
  app,
  scopes: [],
  tokenKinds: PRODUCT,
  rateLimit: 'standard',
  ...(path.includes(':project') ? { projectParam: 'project' } : {}),
  ...extra,
});

const ingest = (id: string, method: HttpMethod, suffix: string, scopes: readonly Scope[], extra: Partial<PublicRoute> = {}): PublicRoute => ({
  id,
  method,
  path: `${STREAM}${suffix}`,
  app: 'ingest',
  scopes,
  tokenKinds: INGEST,
  rateLimit: 'ingest',
  projectParam: 'project',
  dataSourceParam: 'datasource',
  ...extra,
});

/**
 * The events read of one audience contact (apps/audience/src/events). Exported on its own
 * because its tests name it (the scopes the spec gives it); it is in PUBLIC_ROUTES below.
 */
export const AUDIENCE_EVENTS_ROUTE: PublicRoute = product('audience.events', 'GET', '/v1/project/:project/audience/:audienceId/events', 'audience', {
  scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_EVENTS'],
});

export const PUBLIC_ROUTES: readonly PublicRoute[] = [
  // Token introspection: any product token, whatever its scopes (funds need ACCOUNT_READ, decided in the handler).
  product('token.read', 'GET', '/v1/', 'gateway', { rateLimit: 'large' }),
  // The spec asks only for project access.
  product('project.read', 'GET', '/v1/project/:project', 'audience', { rateLimit: 'large' }),
  // The catalogue is schema, not contact data: project access is enough (ADR 0009).
  product('specs.events', 'GET', '/v1/project/:project/specs/events', 'audience'),
  product('specs.event', 'GET', '/v1/project/:project/specs/events/:eventType', 'audience'),
  product('specs.attributes', 'GET', '/v1/project/:project/specs/attributes', 'audience'),

  ingest('stream.read', 'GET', '', ['PROJECT_INGEST_READ']),
  ingest('stream.specs.attributes', 'GET', '/specs/attributes', ['PROJECT_INGEST_READ']),
  ingest('stream.specs.events', 'GET', '/specs/events', ['PROJECT_INGEST_READ']),
  ingest('stream.specs.event', 'GET', '/specs/events/:eventType', ['PROJECT_INGEST_READ']),
  ingest('stream.contacts.write', 'POST', '/contacts', ['PROJECT_INGEST_WRITE'], { bodyLimit: INGEST_BODY_LIMIT }),
  ingest('stream.contacts.delete', 'DELETE', '/contacts/:userId', ['PROJECT_INGEST_WRITE']),
  ingest('stream.events.write', 'POST', '/events', ['PROJECT_INGEST_WRITE'], { bodyLimit: INGEST_BODY_LIMIT }),
  // Contact reads (ADR 0045): searching by phone or email also needs
  // dataPolicy.mayReadPii, decided by the audience app (it depends on the data mode too).
  product('audience.search.phone', 'GET', '/v1/project/:project/audience/search/phone/:phone', 'audience', { scopes: ['PROJECT_AUDIENCE_READ'] }),
  product('audience.search.email', 'GET', '/v1/project/:project/audience/search/email/:userEmail', 'audience', { scopes: ['PROJECT_AUDIENCE_READ'] }),
  product('audience.user', 'GET', '/v1/project/:project/audience/user/:userId', 'audience', { scopes: ['PROJECT_AUDIENCE_READ'] }),
  AUDIENCE_EVENTS_ROUTE,
  // Listings through the list query filter (ADR 0054, ADR 0056).
  product('datasource.list', 'GET', '/v1/project/:project/datasource', 'audience', { scopes: ['PROJECT_DATASOURCE_READ'] }),
  product('sms.sender.list', 'GET', '/v1/project/:project/channel/sms/sender', 'audience', { scopes: ['PROJECT_DIRECT_READ'] }),
  product('rcs.sender.list', 'GET', '/v1/project/:project/channel/rcs/sender', 'audience', { scopes: ['PROJECT_DIRECT_READ'] }),
  // Segments: saved audience filters; reading and counting them is reading the audience, changing them writing it.
  product('segment.create', 'POST', '/v1/project/:project/segment', 'audience', { scopes: ['PROJECT_AUDIENCE_WRITE'] }),
  product('segment.list', 'GET', '/v1/project/:project/segment', 'audience', { scopes: ['PROJECT_AUDIENCE_READ'] }),
  product('segment.read', 'GET', '/v1/project/:project/segment/:segmentId', 'audience', { scopes: ['PROJECT_AUDIENCE_READ'] }),
  product('segment.update', 'PATCH', '/v1/project/:project/segment/:segmentId', 'audience', { scopes: ['PROJECT_AUDIENCE_WRITE'] }),
  product('segment.delete', 'DELETE', '/v1/project/:project/segment/:segmentId', 'audience', { scopes: ['PROJECT_AUDIENCE_WRITE'] }),
  product('segment.count', 'GET', '/v1/project/:project/segment/:segmentId/count', 'audience', { scopes: ['PROJECT_AUDIENCE_READ'] }),
  // Exact live count with compliance per channel (ADR 0053).
  product('audience.count', 'POST', '/v1/project/:project/audience/count', 'audience', { scopes: ['PROJECT_AUDIENCE_READ'] }),
  // Lists of contacts: reading them, plus the plan-gated list scope (ADR 0330).
  product('audience.scroll', 'POST', '/v1/project/:project/audience/scroll', 'audience', { scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_LIST'] }),
  product('audience.search', 'POST', '/v1/project/:project/audience/search', 'audience', { scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_LIST'] }),
  // Aggregates of attributes over a filtered audience, granted manually (ADR 0333).
  product('audience.aggregations', 'POST', '/v1/project/:project/audience/aggregations', 'audience', { scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AGGREGATIONS'] }),
  // Lists of the project's events: event data, as a list (ADR 0332).
  product('event.scroll', 'POST', '/v1/project/:project/event/scroll', 'audience', { scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_EVENTS', 'PROJECT_AUDIENCE_LIST'] }),
  product('event.search', 'POST', '/v1/project/:project/event/search', 'audience', { scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_EVENTS', 'PROJECT_AUDIENCE_LIST'] }),
  // Aggregates of the project's events: event data, granted manually as the audience's (ADR 0335).
  product('event.aggregations', 'POST', '/v1/project/:project/event/aggregations', 'audience', { scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_EVENTS', 'PROJECT_AGGREGATIONS'] }),
  // Readiness: setup status, not contact data; project access is enough (ADR 0131).
  product('readiness.project', 'GET', '/v1/project/:project/readiness', 'readiness'),
  product('readiness.channel', 'GET', '/v1/project/:project/readiness/channel/:channel', 'readiness'),
  // Probes: the shape of the audience, sampled above 10,000 contacts, in the restrictive probes class (ADR 0161).
  product('probes.coverage', 'POST', '/v1/project/:project/audience/coverage', 'probes', { scopes: ['PROJECT_AUDIENCE_READ'], rateLimit: 'probes' }),
  // Direct SMS (issue 17, ADR 0152): sending spends the organization's funds, hence the write scope.
  product('sms.direct.send', 'POST', '/v1/project/:project/channel/sms/sms/direct/:sender/:target', 'messaging', { scopes: ['PROJECT_DIRECT_WRITE'] }),
  product('sms.list', 'GET', '/v1/project/:project/channel/sms/sms', 'messaging', { scopes: ['PROJECT_DIRECT_READ'] }),
  product('sms.read', 'GET', '/v1/project/:project/channel/sms/sms/:smsId', 'messaging', { scopes: ['PROJECT_DIRECT_READ'] }),
  product('probes.volumes', 'POST', '/v1/project/:project/event/volumes', 'probes', { scopes: ['PROJECT_AUDIENCE_READ'], rateLimit: 'probes' }),
];

/**
 * Path parameters that only ever hold identifiers Meld issues (never a customer's data), so
 * access logs may show them. Every other parameter (phones, emails, user ids, and whatever a
 * later route adds) is replaced by its name in the logs: a new parameter is redacted until
 * someone lists it here (ADR 0104).
 */
export const LOGGABLE_PARAMS: ReadonlySet<string> = new Set(['project', 'datasource', 'eventType', 'segmentId', 'audienceId']);

/** Path parameters of a pattern, in order (`/a/:x/b/:y` → ['x', 'y']). */
export function routeParams(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
}
