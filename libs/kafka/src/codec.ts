import type { IHeaders } from 'kafkajs';
import type { ZodType } from 'zod';
import { headerString, SCHEMA_VERSION_HEADER } from './headers';

/** JSON on the wire: readable in any Kafka tool, and the schema version travels in a header. */
export function encodeValue(value: unknown): string {
  const text = JSON.stringify(value);
  // JSON.stringify(undefined) is undefined: a message without a value is a bug, not a tombstone.
  if (text === undefined) throw new TypeError('message value is not JSON-serialisable');
  return text;
}

export type Decoded<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * Bytes → JSON → schema. Never throws: the runner dead-letters the failures with `error`
 * as the reason, so the error names what was wrong (zod's issue paths included).
 */
export function decodeValue<T>(bytes: Buffer | null, schema: ZodType<T>): Decoded<T> {
  let json: unknown;
  if (bytes === null) {
    json = null;
  } else {
    try {
      json = JSON.parse(bytes.toString('utf8'));
    } catch (err) {
      // Not JSON.parse's message: it quotes the value, and this reason is logged (ADR 0338).
      return { ok: false, error: `value is not JSON (${(err as Error).name})` };
    }
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, error: `value does not match the schema: ${formatIssues(parsed.error.issues)}` };
}

function formatIssues(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  return issues
    .slice(0, 5)
    .map((i) => `${i.path.length ? i.path.map(String).join('.') : '(root)'}: ${i.message}`)
    .join('; ');
}

/** The `schema-version` header as a number, undefined when absent or not a number. */
export function schemaVersionOf(headers: IHeaders | undefined): number | undefined {
  const text = headerString(headers, SCHEMA_VERSION_HEADER);
  if (text === undefined) return undefined;
  const n = Number(text);
  return Number.isInteger(n) ? n : undefined;
}
