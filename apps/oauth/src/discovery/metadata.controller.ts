import { InternalPublic } from '@meld/auth';
import { PRODUCT_SCOPES } from '@meld/contracts';
import { Controller, Get, Header, Inject } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@meld/api';
import { AUTH_METHODS } from '../registration/register-client';
import { OAUTH_CONFIG, type OAuthConfig } from '../oauth-config';
import { GRANT_TYPES } from '../protocol/oauth-model';

/** Discovery: RFC 8414 (authorization server) and RFC 9728 (protected resource: the `/v1` API). */
@ApiTags('oauth')
@InternalPublic()
@Controller('.well-known')
export class MetadataController {
  constructor(@Inject(OAUTH_CONFIG) private readonly config: OAuthConfig) {}

  @Get('oauth-authorization-server')
  @ApiOperation({ summary: 'Authorization server metadata (RFC 8414)', description: 'Endpoints, `code_challenge_methods_supported: ["S256"]`, grant types, scopes, `client_id_metadata_document_supported`.', security: [] })
  @Header('cache-control', 'public, max-age=3600')
  authorizationServer() {
    const issuer = this.config.publicUrl;
    return {
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      registration_endpoint: `${issuer}/oauth/register`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      scopes_supported: PRODUCT_SCOPES,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: GRANT_TYPES,
      token_endpoint_auth_methods_supported: AUTH_METHODS,
      revocation_endpoint_auth_methods_supported: AUTH_METHODS,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
      service_documentation: `${issuer}/docs`,
    };
  }

  @Get('oauth-protected-resource')
  @ApiOperation({ summary: 'Protected resource metadata (RFC 9728)', description: 'The API as an OAuth resource and its authorization server: what a 401 on `/v1` points to in `WWW-Authenticate: Bearer resource_metadata=…`.', security: [] })
  @Header('cache-control', 'public, max-age=3600')
  protectedResource() {
    return this.resourceMetadata();
  }

  /** RFC 9728 §3.1: the metadata URL of the resource `<public url>/v1`, which MCP clients try before the root one (ADR 0145). */
  @Get('oauth-protected-resource/v1')
  @ApiOperation({ summary: 'Protected resource metadata of `/v1` (RFC 9728 path form)', description: 'The same document as `/.well-known/oauth-protected-resource`, at the URL RFC 9728 §3.1 forms from the resource identifier `<public url>/v1`.', security: [] })
  @Header('cache-control', 'public, max-age=3600')
  protectedResourceOfV1() {
    return this.resourceMetadata();
  }

  private resourceMetadata() {
    const issuer = this.config.publicUrl;
    return {
      resource: this.config.resource,
      authorization_servers: [issuer],
      scopes_supported: PRODUCT_SCOPES,
      bearer_methods_supported: ['header'],
      resource_documentation: `${issuer}/docs`,
    };
  }
}
