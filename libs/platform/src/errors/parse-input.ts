import { BadRequestException } from '@nestjs/common';
import type { z } from 'zod';

/**
 * Validates a request body or query with zod; a 400 names every bad field:
 * `details.fields` = [{ path: "countries[0].price", message }].
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what = 'body'): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const fields = result.error.issues.map((i) => ({ path: formatPath(i.path), message: i.message }));
  const summary = fields.map((f) => `${f.path || what}: ${f.message}`).join('; ');
  throw new BadRequestException({ message: `invalid ${what}: ${summary}`, details: { fields } });
}

function formatPath(path: PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${String(p)}`)).join('');
}
