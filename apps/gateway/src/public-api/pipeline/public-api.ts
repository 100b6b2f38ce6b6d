import { type AccessDecision, type DataSourceRecord, type PrincipalKeyring, type ProjectRecord, type TokenRecord, authorize, encodePrincipal, hashToken, parseBearer } from '@meld/auth';
import { DEFAULT_BODY_LIMIT, errorSummary, type PublicRoute } from '@meld/contracts';
import { errorBody } from '@meld/platform';
import { Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TenancyStore } from '../access/tenancy-store';
import type { TokenLookup, TokenStore } from '../access/token-store';
import { StoreUnavailable } from '../access/store-unavailable';
import { BodyTooLarge, forward } from '../proxy/forward';
import type { Upstreams } from '../proxy/upstreams';
import { type LocalWindow, retryAfterSeconds } from '../rate-limit/local-window';
import { setRateLimitHeaders, setRefusalHeaders } from '../rate-limit/rate-limit-headers';
import { type Bucket, type RateLimitState, RateLimitUnavailable, type RateLimiter } from '../rate-limit/rate-limiter';
import { describeToken } from '../token-info/token-info';
import { unknownPath } from './unknown-path';

type Db = { isInitialized: boolean; query(sql: string, params?: unknown[]): Promise<unknown> };
type Params = Record<string, string | undefined>;
type Authenticated = { token: TokenRecord; error?: undefined; throttled?: undefined } | { token?: undefined; error: string; throttled?: RateLimitState };

/** Unknown paths under /v1: counted like any other call, then 404. */
export const NOT_FOUND_ROUTE: PublicRoute = { id: 'not-found', method: 'GET', path: '/v1/*', app: 'gateway', scopes: [], tokenKinds: [], rateLimit: 'standard' };
/** Paths under /v1 Fastify's router cannot read (bad percent-encoding): counted like any other call, then its refusal. */
export const UNREADABLE_PATH_ROUTE: PublicRoute = { ...NOT_FOUND_ROUTE, id: 'unreadable-path' };
const RETRY_AFTER_S = '5';
const REFUSALS = { unknown: 'unknown token', revoked: 'token revoked', expired: 'token expired', 'other-resource': 'token issued for another resource (RFC 8707)' } as const;

export interface PublicApiDeps {
  tokens: TokenStore;
  tenancy: TenancyStore;
  limiter: RateLimiter;
  /** Every request per client IP, before any lookup (ADR 0123). */
  clients: LocalWindow;
  /** Presented tokens that were not valid, per client IP: once used up, only tokens already in memory are looked at. */
  authFailures: LocalWindow;
  upstreams: Upstreams;
  db: Db;
  principalKeys: PrincipalKeyring;
  /** The public API origin: a 401 points OAuth clients at its RFC 9728 metadata (ADR 0145). */
  publicUrl: string;
}

/**
 * The public request pipeline, in this order: client limit (in process, per IP) → bearer →
 * token (cache; a client over its failed-authentication budget gets no lookup) → project
 * and data source (cache) → access decision from the route table → rate limit (Redis, spent through local leases: ADR 0207) →
 * answer (401/403/404/429) or forward with the signed principal. The first two limits cost
 * no store call (ADR 0123); the Redis one runs before any refusal is sent, so every answer
 * carries X-RateLimit-* and refused callers are throttled too.
 */
export class PublicApi {
  private readonly log = new Logger('gateway');
  private readonly resourceMetadata: string;

  constructor(private readonly deps: PublicApiDeps) {
    this.resourceMetadata = `resource_metadata="${deps.publicUrl}/.well-known/oauth-protected-resource"`;
  }

  /**
   * RFC 6750 §3 with RFC 9728's metadata pointer. A request without credentials gets the bare
   * challenge; a presented token that is not valid `invalid_token`, so an OAuth client knows to
   * refresh or re-authorize rather than that it forgot the header.
   */
  private challenge(presented: boolean, reason: string): string {
    if (!presented) return `Bearer realm="meld", ${this.resourceMetadata}`;
    return `Bearer realm="meld", error="invalid_token", error_description="${reason.replace(/["\\]/g, "'")}", ${this.resourceMetadata}`;
  }

  /** `refusal`: the answer of UNREADABLE_PATH_ROUTE, once the request is counted. */
  async handle(route: PublicRoute, request: FastifyRequest, reply: FastifyReply, refusal?: { status: number; message: string }): Promise<FastifyReply | void> {
    let bucket: Bucket | undefined;
    try {
      const client = this.deps.clients.hit(request.ip);
      if (!client.allowed) return tooMany(reply, client);
      // Each step answers from memory when it can and awaits only when it must: on the common
      // path (token, project and lease in memory) a request makes no promise of its own before
      // the forward (ADR 0270).
      const authenticating = this.authenticate(authorizationOf(request), request.ip);
      const auth = authenticating instanceof Promise ? await authenticating : authenticating;
      if (auth.throttled) return tooMany(reply, auth.throttled);
      let decision: AccessDecision | undefined;
      let project: ProjectRecord | null = null;
      let dataSource: DataSourceRecord | null = null;
      if (auth.token && route !== NOT_FOUND_ROUTE && route !== UNREADABLE_PATH_ROUTE) {
        [project, dataSource] = this.tenancyInMemory(route, request.params as Params) ?? (await this.tenancy(route, request.params as Params));
        decision = authorize(route, auth.token, project, dataSource);
      }
      bucket = bucketFor(route, auth.token, decision, dataSource, request.ip);
      const state = this.deps.limiter.spend(bucket) ?? (await this.deps.limiter.hit(bucket));
      setRateLimitHeaders(reply, state);
      if (!state.allowed) return reply.code(429).header('retry-after', String(retryAfterSeconds(state))).send();
      if (route === UNREADABLE_PATH_ROUTE) return sendError(reply, refusal?.status ?? 400, refusal?.message ?? 'the request path cannot be read');
      if (route === NOT_FOUND_ROUTE) {
        const unknown = unknownPath(request.method, request.url);
        return sendError(reply, unknown.status, unknown.message);
      }
      if (!auth.token) return sendError(reply.header('www-authenticate', this.challenge(request.headers.authorization !== undefined, auth.error)), 401, auth.error);
      if (!decision?.ok) {
        // A token short of scopes is told which the route needs (RFC 6750 §3.1 insufficient_scope), so a client can ask for them.
        if (decision?.status === 403 && decision.details?.missingScopes) reply.header('www-authenticate', `Bearer realm="meld", error="insufficient_scope", scope="${route.scopes.join(' ')}"`);
        return sendError(reply, decision?.status ?? 403, decision?.message ?? 'forbidden', decision?.details);
      }

      const bodyLimit = route.bodyLimit ?? DEFAULT_BODY_LIMIT;
      if (Number(request.headers['content-length'] ?? 0) > bodyLimit) {
        return sendError(reply.header('connection', 'close'), 413, `request body larger than ${bodyLimit} bytes`);
      }
      if (route.app === 'gateway') return await this.local(route, auth.token, reply);

      // Signed as the request leaves for the app, after its body (forward()): see there.
      const principal = () =>
        encodePrincipal(
          {
            kind: auth.token.kind,
            tokenId: auth.token.id,
            organizationId: auth.token.organizationId,
            plan: auth.token.plan,
            scopes: decision.scopes,
            project: project ? { id: project.id, uid: project.uid, dataMode: project.dataMode } : null,
            dataSourceId: dataSource?.id ?? null,
            requestId: request.id,
          },
          // The app checks these against the request it receives (forward() sends request.url as is).
          { method: request.method, url: request.url, app: route.app },
          this.deps.principalKeys.forApp(route.app),
        );
      const headers: Record<string, string> = { 'x-request-id': request.id };
      if (route.rateLimit === 'ingest') {
        // Ingest's GET …/stream reports recent usage from these (agreed interface); `-window`
        // (seconds) is extra: the window is configurable, so usage reports need not assume a minute.
        headers['x-meld-ratelimit-limit'] = String(state.limit);
        headers['x-meld-ratelimit-remaining'] = String(state.remaining);
        headers['x-meld-ratelimit-reset'] = String(state.reset);
        headers['x-meld-ratelimit-window'] = String(state.window);
      }
      return await this.forward(route, request, reply, headers, bodyLimit, principal);
    } catch (err) {
      return this.failed(err, reply, bucket);
    }
  }

  /** Synchronous when the token's lookup is in memory (known or known unknown); a promise when it takes a query. */
  private authenticate(header: string | undefined | null, ip: string): Authenticated | Promise<Authenticated> {
    if (header === null) {
      this.deps.authFailures.hit(ip);
      return { error: 'malformed Authorization header: sent more than once (send one "Bearer <token>")' };
    }
    const parsed = parseBearer(header);
    // No header is not a guess (it costs nothing and counts as anonymous); a bad one is.
    if ('error' in parsed) {
      if (header !== undefined) this.deps.authFailures.hit(ip);
      return { error: parsed.error };
    }
    const hash = hashToken(parsed.token);
    const cached = this.deps.tokens.cached(hash);
    if (cached) return this.authenticated(cached, ip);
    // Over its failed-authentication budget, a client gets no lookup (ADR 0123).
    if (this.deps.authFailures.exhausted(ip)) return { error: 'too many invalid tokens', throttled: this.deps.authFailures.peek(ip) };
    return this.deps.tokens.byHash(hash).then((found) => this.authenticated(found, ip));
  }

  private authenticated(found: TokenLookup, ip: string): Authenticated {
    if (found.status === 'ok') return { token: found.token };
    this.deps.authFailures.hit(ip);
    return { error: REFUSALS[found.status] };
  }

  /** The route's project and data source when both are in memory (or not needed), else undefined. */
  private tenancyInMemory(route: PublicRoute, params: Params): [ProjectRecord | null, DataSourceRecord | null] | undefined {
    const project = route.projectParam ? this.deps.tenancy.cachedProject(params[route.projectParam] ?? '') : null;
    const dataSource = route.dataSourceParam ? this.deps.tenancy.cachedDataSource(params[route.dataSourceParam] ?? '') : null;
    return project === undefined || dataSource === undefined ? undefined : [project, dataSource];
  }

  private tenancy(route: PublicRoute, params: Params): Promise<[ProjectRecord | null, DataSourceRecord | null]> {
    return Promise.all([
      route.projectParam ? this.deps.tenancy.project(params[route.projectParam] ?? '') : null,
      route.dataSourceParam ? this.deps.tenancy.dataSource(params[route.dataSourceParam] ?? '') : null,
    ]);
  }

  private async local(route: PublicRoute, token: TokenRecord, reply: FastifyReply) {
    if (route.id !== 'token.read') return sendError(reply, 404, 'no such endpoint');
    const body = await describeToken(this.deps.db, token);
    if (!body) return sendError(reply, 401, 'unknown token');
    return reply.send(body);
  }

  private async forward(route: PublicRoute, request: FastifyRequest, reply: FastifyReply, headers: Record<string, string>, bodyLimit: number, principal: () => string) {
    try {
      return await forward(this.deps.upstreams.pool(route.app), request, reply, headers, bodyLimit, principal);
    } catch (err) {
      if (err instanceof BodyTooLarge || (err as { cause?: unknown }).cause instanceof BodyTooLarge) {
        return sendError(reply.header('connection', 'close'), 413, `request body larger than ${bodyLimit} bytes`);
      }
      if (reply.sent) throw err;
      const code = (err as { code?: string }).code ?? '';
      // The class and code say what failed; an upstream error's text is not ours (ADR 0338).
      this.log.warn(`upstream ${route.app} failed for ${route.id}: ${errorSummary(err)}`);
      if (/TIMEOUT/.test(code)) return sendError(reply, 504, `the ${route.app} service did not answer in time`);
      return sendError(reply.header('retry-after', RETRY_AFTER_S), 502, `the ${route.app} service is unavailable`);
    }
  }

  private failed(err: unknown, reply: FastifyReply, bucket: Bucket | undefined) {
    if (reply.sent) return;
    if (err instanceof RateLimitUnavailable || err instanceof StoreUnavailable) {
      this.log.warn(err.message);
      if (!reply.hasHeader('x-ratelimit-limit')) setRateLimitHeaders(reply, this.deps.limiter.unavailableState(bucket ?? { cls: 'anonymous', plan: 's' }));
      const what = err instanceof RateLimitUnavailable ? 'rate limiting' : 'token verification';
      return sendError(reply.header('retry-after', RETRY_AFTER_S), 503, `${what} is temporarily unavailable; retry later`);
    }
    this.log.error({ err }, 'public API request failed');
    return sendError(reply, 500, 'internal error');
  }
}

/**
 * What a request is counted against. Without a valid token: its client IP (anonymous class).
 * An ingest call its token may make: the data source and route ("per data source and per
 * endpoint"). Anything else, refusals included: the token's organization in the route's
 * class, so nobody can spend another organization's or data source's quota.
 */
export function bucketFor(route: PublicRoute, token: TokenRecord | undefined, decision: AccessDecision | undefined, dataSource: DataSourceRecord | null, ip: string): Bucket {
  if (!token) return { cls: 'anonymous', subject: `ip:${ip}`, plan: 's' };
  if (route.rateLimit === 'ingest' && decision?.ok && dataSource) return { cls: 'ingest', subject: `ds:${dataSource.id}:${route.id}`, plan: token.plan };
  return { cls: route.rateLimit, subject: `org:${token.organizationId}`, plan: token.plan };
}

/**
 * The Authorization header, or null when the request carries more than one: Node keeps the first
 * and drops the others, so which credential the client meant cannot be known, and a proxy in
 * front may have read another one (RFC 9110 §5.3: it is no list, one field line only).
 */
function authorizationOf(request: FastifyRequest): string | undefined | null {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  const raw = request.raw.rawHeaders;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 13 && raw[i]!.toLowerCase() === 'authorization' && ++seen > 1) return null;
  return header;
}

/** A refusal by one of the in-process limits: like every 429, an empty body with X-RateLimit-* and Retry-After (system design §4). */
function tooMany(reply: FastifyReply, state: RateLimitState) {
  setRefusalHeaders(reply, state);
  return reply.code(429).send();
}

export function sendError(reply: FastifyReply, status: number, message: string, details?: unknown) {
  return reply.code(status).type('application/json; charset=utf-8').send(errorBody(status, message, details));
}
