import { DEFAULT_OPT_IN_KEYWORDS, DEFAULT_OPT_OUT_KEYWORDS, normaliseKeyword, normalisePhone } from '@meld/contracts';

/**
 * The consent an inbound text states: its whole text equal to one keyword once both are
 * normalised ("stop!" counts, "please stop texting" does not). Opt-out is checked first: a
 * keyword in both lists opts out.
 */
export function keywordConsent(text: string, keywords: { optOut: readonly unknown[] | null; optIn: readonly unknown[] | null }): 'opt-out' | 'opt-in' | null {
  const said = normaliseKeyword(text);
  if (!said) return null;
  const matches = (list: readonly unknown[]) => list.some((k) => typeof k === 'string' && normaliseKeyword(k) === said);
  if (DEFAULT_OPT_OUT_KEYWORDS.includes(said) || matches(keywords.optOut ?? [])) return 'opt-out';
  if (matches(keywords.optIn ?? DEFAULT_OPT_IN_KEYWORDS)) return 'opt-in';
  return null;
}

/** The handset's number in E.164, from the SMSC's international digits (with or without +); null when it is not a valid number. */
export function inboundNumber(from: string): string | null {
  const digits = from.trim().replace(/^\+/, '');
  return /^[0-9]{6,15}$/.test(digits) ? normalisePhone(`+${digits}`, undefined) : null;
}
