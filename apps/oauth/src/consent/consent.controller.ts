import { randomBytes } from 'node:crypto';
import { InternalPublic, hashToken, safeEqual, verifyNoPassword, verifyPassword } from '@meld/auth';
import { Body, Controller, Get, Header, Inject, Post, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@meld/api';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type AuthorizationRequest, checkAuthorizationRequest, parseAuthorizationQuery, type RedirectFailure, redirectBack } from '../authorize/authorization-request';
import { rawQuery } from '../authorize/authorize.controller';
import { errorPage } from '../authorize/error-page';
import { CODE_SECONDS, OAUTH_CONFIG, type OAuthConfig, SESSION_SECONDS } from '../oauth-config';
import { ClientDirectory } from '../client-metadata/client-directory';
import { OAuthRepository } from '../storage/oauth.repository';
import { ConsentRepository, LOGIN_LIMITS } from './consent.repository';
import { consentPage, failedRequestPage, loginPage, STYLESHEET } from './consent-pages';
import { cookie, isLoopbackHttp, readCookies } from './cookies';
import { splitScopes } from './grantable';
import { pageHeaders } from './html';

const CSRF_COOKIE = 'meld_oauth_csrf';
const SESSION_COOKIE = 'meld_oauth_session';
type Form = Record<string, string | string[] | undefined>;
const field = (form: Form, name: string) => (typeof form[name] === 'string' ? (form[name] as string) : '');
/**
 * The consent screen of a request sent back in a form. A browser sends the query it was given,
 * percent-encoded; a hand-made form's other characters are encoded here: a Location header
 * holding one (U+2028, say) was refused by Node after the status was set, and the request was
 * never answered, its connection held open.
 */
const consentUrl = (query: string) =>
  `/oauth/consent?${query.replace(/[^\x21-\x7e]/gu, (c) => [...Buffer.from(c)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''))}`;
const isFailure = (checked: AuthorizationRequest | RedirectFailure): checked is RedirectFailure => 'kind' in checked;

/**
 * The consent screen (ADR 0143): sign in with a dashboard user, then Approve or Deny. The
 * authorization request travels as the original query string and is checked again on every
 * step (it is client input). CSRF: a random value in an HttpOnly SameSite cookie that every
 * form must repeat (double submit). An erroneous request of a known client takes the same
 * steps up to the sign-in, then gets a page linking to its error response instead of the consent
 * screen: nothing goes back to the client before the user has signed in (ADR 0357).
 */
@ApiExcludeController()
@InternalPublic()
@Controller('oauth')
export class ConsentController {
  private readonly secure: boolean;

  constructor(
    private readonly oauth: OAuthRepository,
    private readonly clients: ClientDirectory,
    private readonly consent: ConsentRepository,
    @Inject(OAUTH_CONFIG) private readonly config: OAuthConfig,
  ) {
    this.secure = !isLoopbackHttp(config.publicUrl);
  }

  @Get('consent.css')
  @Header('content-type', 'text/css; charset=utf-8')
  @Header('cache-control', 'public, max-age=3600')
  stylesheet() {
    return STYLESHEET;
  }

  @Get('consent')
  async show(@Query() query: Record<string, unknown>, @Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    const checked = await this.check(query, reply);
    if (!checked) return;
    const csrf = this.csrf(req, reply);
    const user = await this.user(req);
    if (!user) return this.html(reply, 200, loginPage(checked, rawQuery(req), csrf, null));
    if (isFailure(checked)) return this.failed(reply, checked);
    const { granted, withheld } = splitScopes(checked.scopes, user.sensitiveScopesAllowed);
    return this.html(reply, 200, consentPage(checked, rawQuery(req), csrf, user, granted, withheld), checked.redirectUri);
  }

  @Post('consent/login')
  async login(@Body() form: Form, @Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    const query = field(form, 'request');
    const checked = await this.check(parseAuthorizationQuery(query), reply);
    if (!checked) return;
    if (!this.csrfMatches(req, form)) return this.html(reply, 403, errorPage('The form expired or did not come from this site. Go back to the application and start again.'));
    const csrf = field(form, 'csrf');
    const email = field(form, 'email').trim();
    // Keys hash the e-mail so it never sits in clear in this table (or reaches a log).
    const keys = [`email:${hashToken(email.toLowerCase())}`, `ip:${req.ip}`];
    // Counted before the password is checked, so attempts sent at once cannot all pass the limit.
    const attempt = await this.consent.beginAttempt(keys);
    if ((attempt.counts.get(keys[0]) ?? 0) > LOGIN_LIMITS.email || (attempt.counts.get(keys[1]) ?? 0) > LOGIN_LIMITS.ip) {
      await this.consent.forgetAttempt(keys, attempt.at);
      return this.html(reply, 429, loginPage(checked, query, csrf, 'Too many failed sign-ins. Wait 15 minutes and try again.'));
    }
    const user = await this.consent.userByEmail(email);
    // An unknown e-mail spends a verification's time too. A failure keeps the attempt's rows.
    const password = field(form, 'password');
    const verified = user ? await verifyPassword(password, user.passwordHash) : await verifyNoPassword(password);
    if (!user || !verified) return this.html(reply, 401, loginPage(checked, query, csrf, 'Wrong e-mail or password.'));
    await this.consent.forgetAttempt(keys, attempt.at);
    const session = await this.consent.openSession(user.id);
    reply.header('set-cookie', cookie(SESSION_COOKIE, session, SESSION_SECONDS, this.secure));
    // A new CSRF value with the session: one set or read before the sign-in (a cookie planted by a
    // sibling host, say) no longer passes the consent form (ADR 0143).
    this.newCsrf(reply);
    return reply.code(303).header('location', consentUrl(query)).send();
  }

  @Post('consent/decision')
  async decide(@Body() form: Form, @Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    const checked = await this.check(parseAuthorizationQuery(field(form, 'request')), reply);
    if (!checked) return;
    if (!this.csrfMatches(req, form)) return this.html(reply, 403, errorPage('The form expired or did not come from this site. Go back to the application and start again.'));
    const user = await this.user(req);
    if (!user) return reply.code(303).header('location', consentUrl(field(form, 'request'))).send();
    if (isFailure(checked)) return this.failed(reply, checked);
    const back = (params: Record<string, string>) =>
      reply.code(302).header('location', redirectBack(checked.redirectUri, checked.state, this.config.publicUrl, params)).header('cache-control', 'no-store').send();
    if (field(form, 'decision') !== 'approve') return back({ error: 'access_denied', error_description: 'the user denied the request' });

    const own = new Set(user.projects.map((p) => p.uid));
    const picked = ([] as string[]).concat(form.projects ?? []).filter((uid) => own.has(uid));
    const { granted } = splitScopes(checked.scopes, user.sensitiveScopesAllowed);
    if (picked.length === 0 || granted.length === 0) return back({ error: 'access_denied', error_description: picked.length ? 'no scope could be granted' : 'no project was granted' });
    const grantId = await this.oauth.createGrant({ clientId: checked.client.id, userId: user.id, organizationId: user.organizationId, scopes: granted, projects: [...new Set(picked)] }, checked.resource);
    const code = randomBytes(32).toString('base64url');
    await this.oauth.createCode(code, grantId, checked.redirectUri, checked.codeChallenge, CODE_SECONDS, checked.redirectUriSent);
    return back({ code });
  }

  /** The request, or its error for the client (shown after sign-in); null when an error page was sent (no client to trust). */
  private async check(query: Record<string, unknown>, reply: FastifyReply): Promise<AuthorizationRequest | RedirectFailure | null> {
    const checked = await checkAuthorizationRequest(query, this.clients, this.config);
    if ('ok' in checked) return checked.ok;
    if (checked.kind === 'redirect') return checked;
    this.html(reply, 400, errorPage(checked.description));
    return null;
  }

  /** The error in words and a link to the client's error response, never a redirect (OAuth 2.1 §7.12.2). 400 and `no-store` like every page. */
  private failed(reply: FastifyReply, failure: RedirectFailure) {
    return this.html(reply, 400, failedRequestPage(failure));
  }

  /** A failing request's sign-in form ends on our own consent page only, so its CSP names no other origin (ADR 0148, 0357). */
  private async user(req: FastifyRequest) {
    const token = readCookies(req.headers.cookie).get(SESSION_COOKIE);
    return token ? this.consent.sessionUser(token) : null;
  }

  private csrf(req: FastifyRequest, reply: FastifyReply): string {
    const existing = readCookies(req.headers.cookie).get(CSRF_COOKIE);
    if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
    return this.newCsrf(reply);
  }

  private newCsrf(reply: FastifyReply): string {
    const value = randomBytes(32).toString('base64url');
    reply.header('set-cookie', cookie(CSRF_COOKIE, value, SESSION_SECONDS, this.secure));
    return value;
  }

  private csrfMatches(req: FastifyRequest, form: Form): boolean {
    const expected = readCookies(req.headers.cookie).get(CSRF_COOKIE);
    const sent = field(form, 'csrf');
    return !!expected && sent.length > 0 && safeEqual(expected, sent);
  }

  /** `redirectUri`: where the page's form may send the browser back to (its CSP form-action, ADR 0148). */
  private html(reply: FastifyReply, status: number, body: string, redirectUri?: string) {
    return reply.code(status).headers(pageHeaders(redirectUri)).send(body);
  }
}
