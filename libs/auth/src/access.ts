import { INGEST_SCOPES, type DataMode, type Plan, type PublicRoute, type Scope } from '@meld/contracts';
import type { TokenKind } from './tokens';

/** A token as the gateway caches it (looked up by the hash of the bearer). */
export interface TokenRecord {
  id: string;
  kind: TokenKind;
  organizationId: string;
  plan: Plan;
  scopes: Scope[];
  /**
   * Scopes granted to the token that its organization's plan does not unlock (ADR 0328): left out
   * of `scopes`, kept here only so a refusal can say why the token lacks them.
   */
  planGatedScopes?: Scope[];
  /** Project UIDs, or `['*']` for every project of the organization. */
  projects: string[];
  dataSourceId: string | null;
}

export interface ProjectRecord {
  id: string;
  uid: string;
  organizationId: string;
  name: string;
  /** The project's own mode when set, else its organization's. */
  dataMode: DataMode;
}

export interface DataSourceRecord {
  id: string;
  projectId: string;
}

export type AccessDecision =
  | { ok: true; scopes: Scope[] }
  | { ok: false; status: 403 | 404; message: string; details?: Record<string, unknown> };

const refuse = (status: 403 | 404, message: string, details?: Record<string, unknown>): AccessDecision => ({ ok: false, status, message, details });

/** A data-source token is write-only for its own data source and cannot be widened: its scopes are the ingest ones, whatever is stored. */
export function effectiveScopes(token: Pick<TokenRecord, 'kind' | 'scopes'>): Scope[] {
  return token.kind === 'datasource' ? [...INGEST_SCOPES] : token.scopes;
}

export function reachesProject(token: Pick<TokenRecord, 'organizationId' | 'projects'>, project: Pick<ProjectRecord, 'uid' | 'organizationId'>): boolean {
  return project.organizationId === token.organizationId && (token.projects.includes('*') || token.projects.includes(project.uid));
}

/**
 * Whether an authenticated token may call a route, decided from the route table. Order
 * matters: the token kind first (a data-source token on a product route is told so, 403),
 * then the project and data source (404 whether they do not exist or are not reachable,
 * so existence never leaks), then the scopes (403 naming the missing ones). On the stream
 * routes of a data source (the ingest API) a kind or scope refusal is a 404 too, its message
 * still saying why: the ingest spec's error table answers "token not allowed to write to it"
 * with 404 and has no 403 (ADR 0009).
 */
export function authorize(route: PublicRoute, token: TokenRecord, project: ProjectRecord | null, dataSource: DataSourceRecord | null): AccessDecision {
  const denied = route.dataSourceParam ? 404 : 403;
  if (!route.tokenKinds.includes(token.kind)) {
    return refuse(
      denied,
      token.kind === 'datasource'
        ? 'data-source tokens may only call the stream endpoints of their own data source'
        : `${token.kind} tokens cannot call this endpoint (accepted: ${route.tokenKinds.join(', ')} tokens)`,
    );
  }
  if (route.projectParam) {
    if (!project || project.organizationId !== token.organizationId) return refuse(404, 'project not found');
    if (token.kind !== 'datasource' && !reachesProject(token, project)) return refuse(404, 'project not found');
  }
  if (route.dataSourceParam) {
    if (!dataSource || !project || dataSource.projectId !== project.id) return refuse(404, 'data source not found');
    if (token.kind === 'datasource' && token.dataSourceId !== dataSource.id) return refuse(404, 'data source not found');
  } else if (token.kind === 'datasource') {
    // A route with a project but no data source is a product route: refused above by kind; kept as a guard.
    return refuse(403, 'data-source tokens may only call the stream endpoints of their own data source');
  }
  const scopes = effectiveScopes(token);
  const missing = route.scopes.filter((s) => !scopes.includes(s));
  if (missing.length) return refuseScopes(denied, missing, token);
  return { ok: true, scopes };
}

/**
 * A scope refusal naming the missing scopes; those the token was granted but its organization's
 * plan does not unlock are said to be so (`details.planGatedScopes`): "missing" alone sent the
 * caller to ask for a scope it already holds, when it is the plan that has to change (ADR 0328).
 */
function refuseScopes(status: 403 | 404, missing: Scope[], token: Pick<TokenRecord, 'plan' | 'planGatedScopes'>): AccessDecision {
  const gated = missing.filter((s) => token.planGatedScopes?.includes(s));
  const message = `missing scope${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`;
  if (!gated.length) return refuse(status, message, { missingScopes: missing });
  const why = `${gated.join(', ')} ${gated.length > 1 ? 'are' : 'is'} granted to this token but not included in the organization's plan ${token.plan}`;
  return refuse(status, `${message} (${why})`, { missingScopes: missing, planGatedScopes: gated });
}
