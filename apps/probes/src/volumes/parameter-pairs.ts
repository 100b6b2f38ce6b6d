import { IDENTIFIER_WORDS } from '../coverage/top-values-policy';
import { words } from '../shared/names';

/** Last words that make a parameter the name of what a sibling id identifies. */
const NAME_WORDS = ['name', 'title', 'label'];
/**
 * Stems whose name parameter does not follow stem + name: `utm_id` identifies the campaign that
 * `utm_campaign` names (Google Analytics' UTM convention).
 */
const NAME_WORDS_BY_STEM = new Map<string, readonly string[]>([['utm', ['campaign']]]);

export interface ParameterPairs {
  /** id parameter → its name parameter. */
  nameOf: Map<string, string>;
  /** name parameter → its id parameter. */
  idOf: Map<string, string>;
}

/**
 * Which parameter names what an id parameter identifies (probe rule 13, ADR 0167), by shared
 * prefix: an id parameter is one whose last word is an identifier word (`product-id`,
 * `orderUuid`); its name parameter has the same leading words and ends with `name`, `title` or
 * `label` (`product-name`, `productTitle`), in that order, or follows a known convention
 * (`utm-id` ↔ `utm-campaign`). Separators and case do not matter; each name pairs with one id.
 */
export function pairParameters(parameters: readonly string[]): ParameterPairs {
  const byWords = new Map(parameters.map((p) => [words(p).join(' '), p]));
  const nameOf = new Map<string, string>();
  const idOf = new Map<string, string>();
  for (const parameter of parameters) {
    const w = words(parameter);
    if (w.length === 0 || !IDENTIFIER_WORDS.has(w.at(-1)!)) continue;
    const stem = w.slice(0, -1);
    const candidates = [...NAME_WORDS, ...(NAME_WORDS_BY_STEM.get(stem.join(' ')) ?? [])];
    const name = candidates.map((c) => byWords.get([...stem, c].join(' '))).find((p) => p !== undefined && !idOf.has(p));
    if (name === undefined) continue;
    nameOf.set(parameter, name);
    idOf.set(name, parameter);
  }
  return { nameOf, idOf };
}
