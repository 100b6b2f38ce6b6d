import { ApiError, ApiErrors, ApiSuccess } from '../openapi';
import { envelope } from '../envelope';
import { type ListResource, OPERATORS_BY_TYPE, resolveField } from '@meld/filters';
import { applyDecorators } from '@nestjs/common';
import { ApiOperation, ApiQuery } from '../openapi-decorators';
import { z } from 'zod';

export const ListMetadataSchema = z.object({
  start: z.int().min(0).describe('offset of the page (`_start`, default 0)'),
  limit: z.int().min(1).describe('page size (`_limit`, default 50, at most 1000)'),
  count: z.int().min(0).describe('items in this page'),
  total: z.int().min(0).describe('items matching the filter'),
});

/** `{ entity: [items], metadata: {start, limit, count, total} }`. */
export function listEnvelope<T extends z.ZodType>(item: T, id: string) {
  return envelope(z.array(item), ListMetadataSchema).meta({ id });
}

/** The fields of a listing with their types and operators, for its OpenAPI description. */
export function describeListFields(resource: ListResource): string {
  const fields = Object.keys(resource.fields).map((name) => {
    const f = resolveField(resource, name.split('.'));
    return `\`${name.split('.').join('*')}\` (${f?.type}${f?.sortable ? ', sortable' : ''}: ${OPERATORS_BY_TYPE[f?.type ?? 'string'].join(' ')})`;
  });
  return `List query filter (product-api.md): \`<field>_<operator>=value\` (different parameters AND, a repeated one ORs; \`|\` separates list values, \`\\|\` is a literal bar), or the whole query as JSON in \`_q\`. Fields: ${fields.join('; ')}. A bad parameter is 400 with \`details.parameter\` naming it and \`details.allowed\` listing what it accepts.`;
}

/** Documents the reserved parameters of the list filter. */
export function ApiListQuery(resource: ListResource) {
  return applyDecorators(
    ApiQuery({ name: '_q', required: false, description: 'the whole query as JSON: {filter: [{field, operator, value}], paging: {start, limit}, sort: [[field, "asc"|"desc"]], group}; no other parameter with it' }),
    ApiQuery({ name: '_sort', required: false, description: 'comma-separated fields, `:-` descending, `:+` or nothing ascending; nulls last' }),
    ApiQuery({ name: '_start', required: false, description: 'offset, with `_limit`' }),
    ApiQuery({ name: '_limit', required: false, description: `page size 1–${resource.maxLimit ?? 1000} (default ${resource.defaultLimit ?? 50}), with \`_start\`` }),
    ApiQuery({ name: '_group', required: false, description: resource.group ? 'hourly, daily, weekly, monthly or yearly (UTC)' : `${resource.name} do not group: 400` }),
  );
}

/** The whole documentation of a listing: operation, list parameters, page schema, errors. */
export function ApiListOperation(o: { summary: string; description: string; resource: ListResource; schema: z.ZodType; page: string }) {
  return applyDecorators(
    ApiOperation({ summary: o.summary, description: `${o.description} ${describeListFields(o.resource)}` }),
    ApiListQuery(o.resource),
    ApiSuccess(200, o.schema, o.page),
    ApiError(400, 'a bad list query parameter; `details.parameter` names it'),
    ApiErrors(401, 403, 404, 429),
  );
}
