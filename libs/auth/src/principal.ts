import { createHmac } from 'node:crypto';
import type { DataMode, Plan, Scope } from '@meld/contracts';
import { safeEqual } from './tokens';

export const PRINCIPAL_HEADER = 'x-meld-principal';
const MAX_AGE_MS = 60_000;

/**
 * Who is calling, as the gateway established it. Internal apps trust only this (signed)
 * header, never the bearer token, so authorization is decided in one place.
 */
export interface Principal {
  kind: 'product' | 'datasource' | 'oauth' | 'admin';
  tokenId: string | null;
  organizationId: string | null;
  plan: Plan | null;
  scopes: Scope[];
  /** The project of the route, when the route has one and the token reaches it. */
  project: { id: string; uid: string; dataMode: DataMode } | null;
  /**
   * The data source of the route (stream routes), verified by the gateway to belong to the
   * project and, for a data-source token, to be its own; null on other routes.
   */
  dataSourceId: string | null;
  requestId: string;
  /** Issued at (ms since epoch); a header older than a minute is refused (replay window). */
  iat: number;
}

function sign(payload: string, secret: string): string {
  return createHmac('sha256', secret).update(payload).digest('base64url');
}

export function encodePrincipal(principal: Omit<Principal, 'iat'>, secret: string, now = Date.now()): string {
  const payload = Buffer.from(JSON.stringify({ ...principal, iat: now })).toString('base64url');
  return `${payload}.${sign(payload, secret)}`;
}

export class PrincipalError extends Error {}

export function decodePrincipal(header: string | undefined, secret: string, now = Date.now()): Principal {
  if (!header) throw new PrincipalError('missing signed principal: internal apps are reached through the gateway');
  const [payload, signature, extra] = header.split('.');
  if (!payload || !signature || extra !== undefined || !safeEqual(signature, sign(payload, secret))) {
    throw new PrincipalError('invalid principal signature');
  }
  const principal = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Principal;
  if (typeof principal.iat !== 'number' || Math.abs(now - principal.iat) > MAX_AGE_MS) throw new PrincipalError('expired principal');
  return principal;
}

export function hasScopes(principal: Pick<Principal, 'kind' | 'scopes'>, required: readonly Scope[]): Scope[] {
  if (principal.kind === 'admin') return [];
  return required.filter((s) => !principal.scopes.includes(s));
}
