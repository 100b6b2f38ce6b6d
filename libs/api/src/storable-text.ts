/** A lone UTF-16 surrogate (a paired one is one code point under the `u` flag, so it does not match). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Why a string cannot be stored as sent, or null. Postgres text and jsonb hold neither U+0000
 * nor a lone surrogate (JSON can carry both, as `\u0000` and `\ud800`): each is the item's error
 * here, not the batch's 500 when the write reaches Postgres.
 */
export function unstorableText(value: string): string | null {
  if (value.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  if (LONE_SURROGATE.test(value)) return 'must be valid Unicode text (a lone UTF-16 surrogate cannot be stored)';
  return null;
}
