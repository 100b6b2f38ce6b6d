import { type CanActivate, type ExecutionContext, Inject, Injectable, SetMetadata, UnauthorizedException, createParamDecorator } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { PRINCIPAL_HEADER, type Principal, PrincipalError, decodePrincipal } from './principal';

export const PRINCIPAL_SECRET = Symbol('PRINCIPAL_SECRET');
const PUBLIC_ROUTE = 'meld:public-route';

/** Marks a route that needs no principal (health, metrics). */
export const InternalPublic = () => SetMetadata(PUBLIC_ROUTE, true);

type WithPrincipal = { headers: Record<string, string | string[] | undefined>; principal?: Principal };

/** Internal apps refuse any call that does not carry a fresh principal signed by the gateway. */
@Injectable()
export class PrincipalGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(PRINCIPAL_SECRET) private readonly secret: string,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, [context.getHandler(), context.getClass()])) return true;
    const req = context.switchToHttp().getRequest<WithPrincipal>();
    const header = req.headers[PRINCIPAL_HEADER];
    try {
      req.principal = decodePrincipal(Array.isArray(header) ? header[0] : header, this.secret);
      return true;
    } catch (err) {
      if (err instanceof PrincipalError || err instanceof SyntaxError) throw new UnauthorizedException((err as Error).message);
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
