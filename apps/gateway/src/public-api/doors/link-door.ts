import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { takeBodiesUnparsed } from '../proxy/unparsed-bodies';
import type { Upstreams } from '../proxy/upstreams';
import type { RateLimiter } from '../rate-limit/rate-limiter';
import { AnonymousDoor } from './anonymous-door';

/** The unsubscribe form posts no field (ADR 0182): a small limit, a larger body is no page's. */
export const LINK_BODY_LIMIT = 4 * 1024;

/**
 * The SMS link routes (ADR 0182): `/l/{code}` short links and `/u/{code}` unsubscribe pages,
 * anonymous at the host root (also on a project's tracking domain pointed at the gateway),
 * served by the messaging app, counted per client IP in the `links` class.
 */
export function linkDoor(deps: { limiter: RateLimiter; upstreams: Upstreams }): AnonymousDoor {
  return new AnonymousDoor({ ...deps, app: 'messaging', cls: 'links', bodyLimit: LINK_BODY_LIMIT });
}

/** Mounts the door in its own encapsulated context: bodies are streamed to messaging, never parsed here. */
export function linkDoorPlugin(door: AnonymousDoor) {
  return async function linkDoorRoutes(app: FastifyInstance): Promise<void> {
    takeBodiesUnparsed(app);
    const handler = (request: FastifyRequest, reply: FastifyReply) => door.handle(request, reply);
    app.get('/l/:code', handler);
    app.route({ method: ['GET', 'POST'], url: '/u/:code', handler });
  };
}
