import type { KeyObject } from 'node:crypto';
import { type CanActivate, type ExecutionContext, Inject, Injectable, ServiceUnavailableException, SetMetadata, UnauthorizedException, createParamDecorator } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { PRINCIPAL_HEADER, PRINCIPAL_TTL_MS, type Principal, PrincipalError, StalePrincipalError, decodePrincipal } from './principal';

/** What an internal app verifies principals with: its own name and its own principal key (parsed once; ADR 0256). */
export interface PrincipalVerifier {
  app: string;
  key: KeyObject;
}
export const PRINCIPAL_VERIFIER = Symbol('PRINCIPAL_VERIFIER');
const PUBLIC_ROUTE = 'meld:public-route';

/** Marks a route that needs no principal (health, metrics). */
export const InternalPublic = () => SetMetadata(PUBLIC_ROUTE, true);

type WithPrincipal = { id: string; method: string; url: string; headers: Record<string, string | string[] | undefined>; principal?: Principal };
type Reply = { elapsedTime?: number; header(name: string, value: string): unknown };

/** Seconds a caller waits before retrying a request that reached its app late: nothing was done. */
const STALE_RETRY_AFTER_SECONDS = 1;

/** Internal apps refuse any call that does not carry a fresh principal the gateway signed for this very request. */
@Injectable()
export class PrincipalGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(PRINCIPAL_VERIFIER) private readonly verifier: PrincipalVerifier,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, [context.getHandler(), context.getClass()])) return true;
    const http = context.switchToHttp();
    const req = http.getRequest<WithPrincipal>();
    const header = req.headers[PRINCIPAL_HEADER];
    // Age is measured at arrival: the body of a large upload may take a while to stream in.
    const reply = http.getResponse<Reply>();
    const receivedAt = Date.now() - (reply.elapsedTime ?? 0);
    try {
      req.principal = decodePrincipal(
        Array.isArray(header) ? header[0] : header,
        { method: req.method, url: req.url, app: this.verifier.app, requestId: req.id },
        this.verifier.key,
        receivedAt,
      );
      return true;
    } catch (err) {
      if (err instanceof StalePrincipalError) {
        // Set here, not by the error filter: @meld/platform depends on this lib, not the reverse.
        reply.header('retry-after', String(STALE_RETRY_AFTER_SECONDS));
        throw new ServiceUnavailableException(
          `the request took more than ${PRINCIPAL_TTL_MS / 1000} s to reach the ${this.verifier.app} service inside Meld; nothing was done: retry after Retry-After seconds`,
        );
      }
      if (err instanceof PrincipalError) throw new UnauthorizedException(err.message);
      throw err;
    }
  }
}

/** The caller, as the gateway signed it. */
export const CurrentPrincipal = createParamDecorator((_: unknown, context: ExecutionContext): Principal => {
  const principal = context.switchToHttp().getRequest<WithPrincipal>().principal;
  if (!principal) throw new UnauthorizedException('no principal on this route');
  return principal;
});
