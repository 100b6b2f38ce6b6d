/**
 * Timestamps leave Meld as ISO 8601 with an explicit offset (`+00:00`), as the spec shows
 * them; `Z` is valid ISO 8601 but some clients only parse numeric offsets.
 */
export function isoWithOffset(date: Date): string {
  return date.toISOString().replace(/Z$/, '+00:00');
}

export function isoOrNull(date: Date | null | undefined): string | null {
  return date ? isoWithOffset(date) : null;
}
