import { Inject, Injectable } from '@nestjs/common';
import OAuth2Server, { InvalidGrantError, InvalidRequestError, OAuthError, Request, Response, ServerError } from '@node-oauth/oauth2-server';
import { checkResource } from '../authorize/authorization-request';
import { ACCESS_TOKEN_SECONDS, OAUTH_CONFIG, type OAuthConfig, REFRESH_TOKEN_SECONDS } from '../oauth-config';
import { OAuthRepository } from '../storage/oauth.repository';
import { ClientDirectory } from '../client-metadata/client-directory';
import { presentedAuthMethod } from './client-auth-method';
import { GRANT_TYPES, OAuthModel } from './oauth-model';
import { repeatedField } from './single-fields';

export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

type Incoming = { method: string; headers: Record<string, string | string[] | undefined>; query: unknown; body: unknown };

/** `POST /oauth/token`, run by @node-oauth/oauth2-server on the Postgres model (ADR 0141). */
@Injectable()
export class TokenEndpoint {
  constructor(
    private readonly repo: OAuthRepository,
    private readonly clients: ClientDirectory,
    @Inject(OAUTH_CONFIG) private readonly config: OAuthConfig,
  ) {}

  /** One per request: its model knows how the request authenticated its client (ADR 0142). */
  private server(incoming: Incoming): OAuth2Server {
    return new OAuth2Server({
      model: new OAuthModel(this.repo, this.clients, presentedAuthMethod(incoming.headers, incoming.body)),
      accessTokenLifetime: ACCESS_TOKEN_SECONDS,
      refreshTokenLifetime: REFRESH_TOKEN_SECONDS,
      // Public clients (PKCE, no secret) are the common case of MCP-style apps; confidential
      // clients are still checked by the model when they registered a secret (ADR 0142).
      requireClientAuthentication: { authorization_code: false, refresh_token: false },
      alwaysIssueNewRefreshToken: true,
    });
  }

  async exchange(incoming: Incoming): Promise<HttpAnswer> {
    // The library knows the password and client_credentials grants too and would refuse them
    // as unauthorized_client (or invalid_client first); to this server they do not exist.
    const form = incoming.body as Record<string, unknown> | undefined;
    const repeated = repeatedField(form);
    if (repeated) return repeated;
    const grantType = form?.grant_type;
    if (typeof grantType === 'string' && !(GRANT_TYPES as readonly string[]).includes(grantType)) {
      return refused('unsupported_grant_type', `grant_type must be one of ${GRANT_TYPES.join(', ')}`);
    }
    // RFC 8707 §2.2: a token for another resource than the one API this server protects cannot be had.
    if (checkResource(form?.resource, this.config.resource) === undefined) return refused('invalid_target', `resource must be ${this.config.resource}, this API`);
    // The library spends the refresh token before it refuses a blank scope (see scopesBeyondGrant).
    if (grantType === 'refresh_token' && typeof form?.scope === 'string' && form.scope.trim() === '') {
      return refused('invalid_scope', 'scope must name scopes of the grant, or be left out');
    }
    const wider = grantType === 'refresh_token' ? await this.scopesBeyondGrant(form!) : null;
    if (wider) return refused('invalid_scope', `scope may only name scopes of the grant; not granted: ${wider.join(' ')}`);
    const request = new Request({ method: incoming.method, headers: incoming.headers as Record<string, string>, query: (incoming.query ?? {}) as Record<string, string>, body: incoming.body ?? {} });
    const response = new Response();
    try {
      await this.server(incoming).token(request, response);
      return { status: 200, headers: { ...response.headers }, body: response.body as Record<string, unknown> };
    } catch (err) {
      // The library answers any failure of ours (the store, a broken model) as a 503 server_error
      // carrying the error's own message, and logs nothing: the app's filter logs it and answers
      // a 500 that reveals nothing internal, as on every other endpoint.
      if (err instanceof ServerError) throw (err as ServerError & { inner?: unknown }).inner ?? err;
      if (!(err instanceof OAuthError)) throw err;
      const e = redirectMismatch(err) ? new InvalidGrantError('Invalid grant: `redirect_uri` does not match the authorization request') : err;
      // The library challenges only a client that tried Basic; every 401 carries one (RFC 9110 §15.5.2, ADR 0142).
      const challenge: Record<string, string> = e.code === 401 ? { 'www-authenticate': 'Basic realm="oauth"' } : {};
      return { status: e.code, headers: { 'cache-control': 'no-store', ...challenge, ...response.headers }, body: { error: e.name, error_description: e.message } };
    }
  }

  /**
   * The scopes a refresh asks for that its grant lacks. Checked here because the library spends
   * (rotates) the refresh token before it checks the scope: a refused widening would otherwise
   * cost the client its token, and its retry would read as a reuse and end the grant.
   */
  private async scopesBeyondGrant(form: Record<string, unknown>): Promise<string[] | null> {
    if (typeof form.scope !== 'string' || typeof form.refresh_token !== 'string') return null;
    const found = await this.repo.refreshToken(form.refresh_token);
    if (!found) return null;
    const wider = form.scope.split(' ').filter((s) => s && !found.grant.scopes.includes(s));
    return wider.length ? wider : null;
  }
}

/**
 * The library (5.3.0, pinned) answers a redirect_uri unlike the authorization request's with
 * invalid_request; RFC 6749 §5.2 and OAuth 2.1 §3.2.4 name it invalid_grant (ADR 0141). A missing
 * or malformed one stays invalid_request.
 */
const redirectMismatch = (err: OAuthError) => err instanceof InvalidRequestError && err.message === 'Invalid request: `redirect_uri` is invalid';

const refused = (error: string, description: string): HttpAnswer => ({ status: 400, headers: { 'cache-control': 'no-store' }, body: { error, error_description: description } });
