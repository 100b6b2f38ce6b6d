/**
 * An event's parameters from the events table's parallel arrays: the probes sink stores each
 * value as its JSON encoding (event-row.ts); a value that does not parse is shown as stored.
 */
export function eventParameters(keys: readonly string[], values: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k, i) => [k, parameterValue(values[i])]));
}

/** One stored parameter value as sent (its JSON decoded); as stored when it does not parse. */
export function parameterValue(text: string | undefined): unknown {
  if (text === undefined) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
