import { BadRequestException } from '@nestjs/common';
import type { z } from 'zod';

interface InputField {
  path: string;
  message: string;
}

/**
 * Validates a request body or query with zod; a 400 names every bad field:
 * `details.fields` = [{ path: "countries[0].price", message }].
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what = 'body'): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const fields = inputFields(result.error.issues);
  const summary = fields.map((f) => `${f.path || what}: ${f.message}`).join('; ');
  throw new BadRequestException({ message: `invalid ${what}: ${summary}`, details: { fields } });
}

/**
 * The fields of a refusal. An unknown key is named by its own path ("extra: unknown field"),
 * not reported against its parent object, so the caller sees at once which key to remove.
 */
function inputFields(issues: readonly z.core.$ZodIssue[]): InputField[] {
  return issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: formatPath([...issue.path, key]), message: 'unknown field' }))
      : [{ path: formatPath(issue.path), message: issue.message }],
  );
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${String(p)}`)).join('');
}
