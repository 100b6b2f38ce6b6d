/**
 * An object for lookups keyed by user input (attribute, parameter, field and asset names):
 * it has no prototype, so `constructor`, `__proto__` or `toString` are plain keys, never
 * Object.prototype's members (ADR 0124). Copies the own enumerable entries of `from`.
 * JSON.stringify and spreads treat it as a plain object.
 */
export function dict<V>(from?: Readonly<Record<string, V>> | Iterable<readonly [string, V]>): Record<string, V> {
  const out = Object.create(null) as Record<string, V>;
  if (!from) return out;
  const entries: Iterable<readonly [string, V]> = Symbol.iterator in from ? (from as Iterable<readonly [string, V]>) : Object.entries(from);
  for (const [key, value] of entries) out[key] = value;
  return out;
}

/** Own-property check for objects that may have a prototype (request bodies, parsed JSON). */
export const hasKey = (object: object, key: string): boolean => Object.prototype.hasOwnProperty.call(object, key);
