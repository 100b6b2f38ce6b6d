import { InternalPublic } from '@meld/auth';
import { Controller, Get, Inject, Query, Req, Res } from '@nestjs/common';
import { ApiPostgresUnavailable, ApiOperation, ApiResponse, ApiTags } from '@meld/api';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { pageHeaders } from '../consent/html';
import { OAUTH_CONFIG, type OAuthConfig } from '../oauth-config';
import { ClientDirectory } from '../client-metadata/client-directory';
import { checkAuthorizationRequest } from './authorization-request';
import { errorPage } from './error-page';

/** The raw query string, byte for byte as the client sent it. */
export const rawQuery = (req: FastifyRequest) => {
  const at = req.url.indexOf('?');
  return at < 0 ? '' : req.url.slice(at + 1);
};

@ApiTags('oauth')
@InternalPublic()
@ApiPostgresUnavailable()
@Controller('oauth')
export class AuthorizeController {
  constructor(
    private readonly clients: ClientDirectory,
    @Inject(OAUTH_CONFIG) private readonly config: OAuthConfig,
  ) {}

  /**
   * Checks, then 302 to the consent screen with the query string unchanged (product spec,
   * Endpoints), an erroneous request of a known client included: its error goes back only after
   * the user has signed in and chosen to follow it (OAuth 2.1 §7.12.2, ADR 0357).
   */
  @Get('authorize')
  @ApiOperation({
    summary: 'Start an authorization (OAuth 2.1, code with PKCE S256)',
    description:
      'Opened in a browser. A known client with an exactly matching `redirect_uri` (any port on `http://127.0.0.1` or `http://[::1]`, OAuth 2.1 §2.3.1) gets a 302 to the consent screen with the query string passed through unchanged, also when the rest of the request is wrong (scope, PKCE, response_type, resource, a repeated parameter): the consent screen asks the user to sign in first and then shows the error with a link back to the client carrying `error`, `error_description`, `state` and `iss`. Nothing is redirected to the client before the user has signed in (OAuth 2.1 §7.12.2). An unknown client or redirect URI gets an HTML error page, never a redirect.',
    security: [],
  })
  @ApiResponse({ status: 302, description: 'to the consent screen, query string unchanged (errors of a known client are shown there after sign-in)' })
  @ApiResponse({ status: 400, description: 'HTML error page (bad client or redirect URI)' })
  async authorize(@Query() query: Record<string, unknown>, @Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    const checked = await checkAuthorizationRequest(query, this.clients, this.config);
    // A redirect failure goes to the consent steps too: they sign the user in before any link to the client (ADR 0357).
    if ('ok' in checked || checked.kind === 'redirect') return reply.code(302).header('location', `/oauth/consent?${rawQuery(req)}`).header('cache-control', 'no-store').send();
    return reply.code(400).headers(pageHeaders()).send(errorPage(checked.description));
  }
}
