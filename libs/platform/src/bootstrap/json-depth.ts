/**
 * Deepest nesting of arrays and objects a JSON request body may have (ADR 0113). JSON.parse
 * itself copes with any depth, but what runs after it (zod, JSON.stringify, a recursive walk)
 * overflows the stack on a body of a few kilobytes of brackets: a 500, or a crashed worker.
 * No Meld body needs more than a handful of levels (filters included).
 */
export const MAX_JSON_DEPTH = 32;

/** True when `text` (JSON) nests arrays and objects deeper than `max`; one pass, no parse. */
export function jsonTooDeep(text: string, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return false;
}

export function jsonTooDeepMessage(max: number = MAX_JSON_DEPTH): string {
  return `request body nests arrays and objects deeper than ${max} levels`;
}
