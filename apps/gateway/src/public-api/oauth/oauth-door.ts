import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AnonymousDoor } from '../doors/anonymous-door';
import { takeBodiesUnparsed } from '../proxy/unparsed-bodies';
import type { Upstreams } from '../proxy/upstreams';
import type { RateLimiter } from '../rate-limit/rate-limiter';

/**
 * The OAuth endpoints at the API host root (product spec: anonymous, outside `/v1`; ADR 0145).
 * The protected-resource document is also at RFC 9728's path form for the resource `/v1`
 * (§3.1: the well-known segment before the resource's path), which MCP clients try first.
 */
export const OAUTH_METADATA_PATHS = ['/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/v1'] as const;
/** Registration metadata and forms are small; this is far above any legitimate one. */
export const OAUTH_BODY_LIMIT = 64 * 1024;

/**
 * `/oauth/*` and the two discovery documents, forwarded to the oauth app in the `oauth`
 * rate-limit class. The bearer/basic `Authorization` header is passed through here (unlike on
 * `/v1`): the token and revocation endpoints authenticate confidential clients with it.
 */
export function oauthDoor(deps: { limiter: RateLimiter; upstreams: Upstreams }): AnonymousDoor {
  return new AnonymousDoor({ ...deps, app: 'oauth', cls: 'oauth', bodyLimit: OAUTH_BODY_LIMIT, passAuthorization: true });
}

/** Mounts the door in its own encapsulated context: bodies are streamed to the oauth app, never parsed here. */
export function oauthDoorPlugin(door: AnonymousDoor) {
  return async function oauthDoorRoutes(app: FastifyInstance): Promise<void> {
    takeBodiesUnparsed(app);
    const handler = (request: FastifyRequest, reply: FastifyReply) => door.handle(request, reply);
    app.route({ method: ['GET', 'POST'], url: '/oauth/*', handler });
    for (const url of OAUTH_METADATA_PATHS) app.get(url, handler);
  };
}
