import { errorDescription } from '../authorize/authorization-request';
import type { HttpAnswer } from './token-endpoint';

/**
 * RFC 6749 §3.1: a request parameter must not be given more than once. The form parser turns a
 * repeated field into a list, which the library would take as text (or crash hashing it): such a
 * request is refused as `invalid_request` naming the field (within RFC 6749 §5.2's characters).
 */
export function repeatedField(form: unknown): HttpAnswer | null {
  if (!form || typeof form !== 'object') return null;
  const name = Object.keys(form).find((key) => typeof (form as Record<string, unknown>)[key] !== 'string');
  if (name === undefined) return null;
  return {
    status: 400,
    headers: { 'cache-control': 'no-store' },
    body: { error: 'invalid_request', error_description: errorDescription(`${name} must be given once, as text`) },
  };
}
