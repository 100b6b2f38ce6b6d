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

/**
 * A time zone's IANA name as ClickHouse can load it, or null when it is none. Intl accepts any
 * case (`europe/paris`), ClickHouse finds a zone by its file name, case included: a name that is
 * the canonical one in another case becomes the canonical one. A well-cased alias stays as given
 * (`Asia/Kolkata`, which ICU would rename `Asia/Calcutta`: tzdata has both); a miscased alias
 * becomes the canonical name of its zone.
 */
export function canonicalTimeZone(tz: string): string | null {
  let canonical: string;
  try {
    canonical = new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
  if (tz === canonical || tz.toLowerCase() === canonical.toLowerCase()) return canonical;
  return WELL_CASED.test(tz) ? tz : canonical;
}

/** Each part of a tzdata name starts with a capital or a digit (`America/Port-au-Prince`, `Etc/GMT+5`). */
const WELL_CASED = /^[A-Z0-9][^/]*(\/[A-Z0-9][^/]*)*$/;

const zoneFormats = new Map<string, Intl.DateTimeFormat>();

/**
 * An instant as ISO 8601 in an IANA time zone, with that zone's offset at the instant
 * (`2026-03-29T00:00:00+01:00`): a histogram bucket reads as the local start it is.
 */
export function isoInZone(date: Date, timeZone: string): string {
  let format = zoneFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'longOffset',
    });
    zoneFormats.set(timeZone, format);
  }
  const parts = new Map(format.formatToParts(date).map((p) => [p.type, p.value]));
  // `GMT+05:30`, or `GMT` alone at offset zero.
  const offset = (parts.get('timeZoneName') ?? 'GMT').replace(/^GMT/, '') || '+00:00';
  return `${parts.get('year')}-${parts.get('month')}-${parts.get('day')}T${parts.get('hour')}:${parts.get('minute')}:${parts.get('second')}${offset}`;
}
