import { PUBLIC_ROUTES, type PublicRoute, routeParams } from '@meld/contracts';
import type { OpenAPIObject, OperationObject } from '@nestjs/swagger';
import { BEARER, OAUTH2 } from './security-schemes';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** `/v1/project/:project` → `/v1/project/{project}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

const errorRef = { $ref: '#/components/schemas/Error' };
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: errorRef } } });

/**
 * The route table is what the gateway accepts, so it is what the document must list: every
 * route gets its security (bearer, plus OAuth 2 with the route's scopes when OAuth tokens
 * may call it), its rate-limit class and the gateway's refusals; a route whose app does not
 * document it yet still appears, as a stub saying so.
 */
export function applyRouteTable(doc: OpenAPIObject, routes: readonly PublicRoute[] = PUBLIC_ROUTES): void {
  for (const route of routes) {
    const path = openApiPath(route.path);
    const method = route.method.toLowerCase() as Method;
    const item = (doc.paths[path] ??= {});
    const operation: OperationObject = (item[method] ??= stub(route));
    operation.security = [{ [BEARER]: [] }, ...(route.tokenKinds.includes('oauth') ? [{ [OAUTH2]: [...route.scopes] }] : [])];
    const scopes = route.scopes.length ? `Needs ${route.scopes.map((s) => `\`${s}\``).join(', ')}.` : 'Needs no scope beyond access to the project.';
    operation.description = [operation.description, `${scopes} Tokens: ${route.tokenKinds.join(', ')}. Rate-limit class: \`${route.rateLimit}\`.`].filter(Boolean).join('\n\n');
    Object.assign(operation, { 'x-meld-route': { id: route.id, app: route.app, scopes: route.scopes, tokenKinds: route.tokenKinds, rateLimit: route.rateLimit } });
    const responses = operation.responses;
    responses['401'] ??= errorResponse('missing, malformed, unknown or revoked token');
    // The ingest API refuses a token's kind or scopes with 404: its error table has no 403 (ADR 0009).
    // `details.planGatedScopes`: granted, but not unlocked by the organization's plan (ADR 0328).
    if (route.dataSourceParam) responses['404'] ??= errorResponse('project or data source not found, or this token may not use it (`details.missingScopes`)');
    else responses['403'] ??= errorResponse("wrong token kind, or a scope is missing (`details.missingScopes`; `details.planGatedScopes` names those granted but not included in the organization's plan)");
    if (route.projectParam) responses['404'] ??= errorResponse('project or data source not found, or not reachable with this token');
    responses['429'] ??= { description: 'rate limit exceeded; empty body, retry after `X-RateLimit-Reset`' };
  }
}

function stub(route: PublicRoute): OperationObject {
  return {
    summary: route.id,
    description: `Served by the ${route.app} app, which does not document it yet.`,
    tags: [route.app],
    parameters: routeParams(route.path).map((name) => ({ name, in: 'path' as const, required: true, schema: { type: 'string' } })),
    responses: { '200': { description: 'success' } },
  };
}
