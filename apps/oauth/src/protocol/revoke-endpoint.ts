import { Injectable } from '@nestjs/common';
import { InvalidClientError } from '@node-oauth/oauth2-server';
import { OAuthRepository } from '../storage/oauth.repository';
import { ClientDirectory } from '../client-metadata/client-directory';
import { presentedAuthMethod } from './client-auth-method';
import { OAuthModel } from './oauth-model';
import { repeatedField } from './single-fields';
import type { HttpAnswer } from './token-endpoint';

type Incoming = { headers: Record<string, string | string[] | undefined>; body: unknown };

const NO_STORE = { 'cache-control': 'no-store' };
const invalidClient = (): HttpAnswer => ({ status: 401, headers: { ...NO_STORE, 'www-authenticate': 'Basic realm="oauth"' }, body: { error: 'invalid_client', error_description: 'client authentication failed' } });

/** RFC 6749 §2.3.1 client credentials in an `Authorization: Basic` header (form-encoded, then base64). */
function basicCredentials(header: string | string[] | undefined): { name: string; pass: string } | null {
  const match = typeof header === 'string' ? /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header.trim()) : null;
  if (!match) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  try {
    return { name: decodeURIComponent(decoded.slice(0, colon)), pass: decodeURIComponent(decoded.slice(colon + 1)) };
  } catch {
    return null;
  }
}

/**
 * RFC 7009 revocation. The library has none, so this reuses its model's client check, the
 * registered authentication method included (RFC 7009 §2.1, ADR 0142).
 * A refresh token ends its whole grant (RFC 7009 §2.1 "SHOULD also invalidate the access
 * tokens"); an access token only itself. Unknown or foreign tokens still answer 200, so the
 * endpoint says nothing about tokens of other clients.
 */
@Injectable()
export class RevokeEndpoint {
  constructor(
    private readonly repo: OAuthRepository,
    private readonly clients: ClientDirectory,
  ) {}

  async revoke({ headers, body }: Incoming): Promise<HttpAnswer> {
    const form = (body ?? {}) as Record<string, unknown>;
    const repeated = repeatedField(form);
    if (repeated) return repeated;
    const basic = basicCredentials(headers.authorization);
    const clientId = basic?.name ?? (typeof form.client_id === 'string' ? form.client_id : undefined);
    const secret = basic?.pass ?? (typeof form.client_secret === 'string' ? form.client_secret : undefined);
    if (!clientId) return invalidClient();
    const model = new OAuthModel(this.repo, this.clients, presentedAuthMethod(headers, form));
    const client = await model.getClient(clientId, secret).catch((err: unknown) => {
      if (err instanceof InvalidClientError) return null;
      throw err;
    });
    if (!client) return invalidClient();
    if (typeof form.token !== 'string' || form.token === '') return { status: 400, headers: NO_STORE, body: { error: 'invalid_request', error_description: 'missing parameter: token' } };

    const refresh = await this.repo.refreshToken(form.token);
    if (refresh && refresh.grant.clientId === client.id) {
      await this.repo.revokeGrant(refresh.grant.id);
    } else {
      const access = await this.repo.accessTokenGrant(form.token, client.id);
      if (access) await this.repo.revokeAccessToken(access.tokenId);
    }
    return { status: 200, headers: NO_STORE, body: {} };
  }
}
