import { unstorableText } from '@meld/api';
import { NOT_FINITE } from '../contacts/attribute-rules';

/**
 * Bounds on what an event may carry beyond its declaration (ADR 0113). Undeclared parameters
 * pass (types evolve), but every parameter, declared or not, is a JSON value stored as text in
 * ClickHouse and read back by probes: no U+0000 nor lone surrogate in names or values (Postgres
 * refuses both, and a NUL in a ClickHouse string breaks the tools that read it), no number JSON cannot write back
 * (1e400 parses as Infinity, published as null), at most MAX_PARAMETER_DEPTH levels
 * of nesting, and at most MAX_PARAMETERS_BYTES as JSON for the whole object.
 */
export const MAX_PARAMETER_DEPTH = 5;
export const MAX_PARAMETERS_BYTES = 16 * 1024;

/**
 * ClickHouse 18.16's DateTime is seconds since 1970 in a UInt32: a date before 1970 is stored as
 * 1970 and one after 2106-02-07 wraps round to 1970-something. Years 1970 to 2105 are kept as sent.
 */
const EARLIEST_EVENT_DATE = Date.UTC(1970, 0, 1);
const LATEST_EVENT_DATE = Date.UTC(2106, 0, 1) - 1;

/** Why an ISO `_event_date` (already well-formed) cannot be stored, or null. */
export function eventDateRangeError(iso: string): string | null {
  const ms = Date.parse(iso);
  return ms < EARLIEST_EVENT_DATE || ms > LATEST_EVENT_DATE ? 'must be between 1970-01-01T00:00:00Z and 2105-12-31T23:59:59Z' : null;
}

/** Each error with the item's field it belongs to: `_event_parameters` or `_event_parameters.<name>`. */
export function eventParametersErrors(parameters: Record<string, unknown>): Array<[field: string, message: string]> {
  const errors: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(parameters)) {
    const badName = unstorableText(name);
    if (badName) {
      errors.push(['_event_parameters', `parameter names ${badName}`]);
      continue;
    }
    const problem = valueProblem(value);
    if (problem) errors.push([`_event_parameters.${name}`, problem]);
  }
  if (errors.length > 0) return errors;
  const sizeError = parametersSizeError(parameters);
  if (sizeError) errors.push(['_event_parameters', sizeError]);
  return errors;
}

/** Why the parameters take too many bytes as JSON, or null. */
export function parametersSizeError(parameters: Record<string, unknown>): string | null {
  const bytes = Buffer.byteLength(JSON.stringify(parameters));
  return bytes > MAX_PARAMETERS_BYTES ? `must be at most ${MAX_PARAMETERS_BYTES} bytes as JSON (is ${bytes})` : null;
}

/**
 * Depth and NUL in one iterative walk (a recursive one could be driven into a stack overflow by
 * nesting; the body's own depth limit bounds it anyway). A scalar is depth 0, `{"a":1}` depth 1.
 */
function valueProblem(root: unknown): string | null {
  const stack: Array<[unknown, number]> = [[root, 0]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value === 'string') {
      const bad = unstorableText(value);
      if (bad) return bad;
      continue;
    }
    // JSON has no infinity: 1e400 parses as Infinity and JSON.stringify would publish it as null, a value silently lost.
    if (typeof value === 'number' && !Number.isFinite(value)) return NOT_FINITE;
    if (value === null || typeof value !== 'object') continue;
    if (depth + 1 > MAX_PARAMETER_DEPTH) return `must not nest more than ${MAX_PARAMETER_DEPTH} levels of lists and objects`;
    if (Array.isArray(value)) for (const v of value) stack.push([v, depth + 1]);
    else
      for (const [k, v] of Object.entries(value)) {
        const badKey = unstorableText(k);
        if (badKey) return `names inside ${badKey}`;
        stack.push([v, depth + 1]);
      }
  }
  return null;
}
