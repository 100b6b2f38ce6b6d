import { unstorableText } from '@meld/api';
import { BadRequestException } from '@nestjs/common';

/**
 * Refuses a validated admin body holding text Postgres cannot store as sent: a lone UTF-16
 * surrogate (`\ud800` in JSON) was written as U+FFFD with a 201, a name other than the one sent,
 * and U+0000 was a 400 naming no field. The 400 names each value's path, as parseInput does
 * (ADR 0014). Iterative: the body's depth is bounded upstream, but the walk need not rely on it.
 */
export function refuseUnstorableText(body: unknown): void {
  const fields: Array<{ path: string; message: string }> = [];
  const stack: Array<[unknown, string]> = [[body, '']];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'string') {
      const problem = unstorableText(value);
      if (problem) fields.push({ path, message: problem });
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push([item, `${path}[${i}]`]));
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        const at = path ? `${path}.${key}` : key;
        const problem = unstorableText(key);
        if (problem) fields.push({ path: at, message: `key ${problem}` });
        stack.push([item, at]);
      }
    }
  }
  if (!fields.length) return;
  fields.sort((a, b) => a.path.localeCompare(b.path));
  throw new BadRequestException({ message: `invalid body: ${fields.map((f) => `${f.path || 'body'}: ${f.message}`).join('; ')}`, details: { fields } });
}
