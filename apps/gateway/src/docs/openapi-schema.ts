import type { SchemaObject } from '@nestjs/swagger';
import { z } from 'zod';

/**
 * A zod schema as an OpenAPI 3.0 schema for operations written by hand (not scanned from
 * a controller): named sub-schemas (`.meta({ id })`) are hoisted into `components.schemas`.
 */
export function toOpenApiSchema(schema: z.ZodType, components: Record<string, unknown>): SchemaObject {
  const json = z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'output' }) as Record<string, unknown>;
  const { definitions, $defs, $schema: _ignored, ...root } = json as { definitions?: Record<string, unknown>; $defs?: Record<string, unknown>; $schema?: string };
  for (const [name, def] of Object.entries({ ...definitions, ...$defs })) components[name] ??= rewriteRefs(def);
  return rewriteRefs(root) as SchemaObject;
}

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' ? v.replace(/^#\/(definitions|\$defs)\//, '#/components/schemas/') : rewriteRefs(v)]),
  );
}
