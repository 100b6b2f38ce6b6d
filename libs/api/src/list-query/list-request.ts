import { type ListQuery, ListQueryError, type ListResource, parseListQuery } from '@meld/filters';
import { BadRequestException, type ExecutionContext, createParamDecorator } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/**
 * The raw query string of the request. The list filter reads it itself (order kept,
 * repeated parameters kept, `*` and `|` untouched) rather than Fastify's parsed object.
 */
export const ListQueryString = createParamDecorator((_: unknown, ctx: ExecutionContext): string => {
  const url = ctx.switchToHttp().getRequest<FastifyRequest>().url;
  const i = url.indexOf('?');
  return i < 0 ? '' : url.slice(i + 1);
});

/** The list query of a request; a bad one is 400 with `details` {parameter, allowed?}. */
export function listQueryOf(queryString: string, resource: ListResource): ListQuery {
  try {
    return parseListQuery(queryString, resource);
  } catch (e) {
    if (e instanceof ListQueryError) throw new BadRequestException({ message: e.message, details: e.details });
    throw e;
  }
}
