import { AUDIENCE_FILTER_LIMITS, AUDIENCE_FILTER_VERSION, type AudienceFilterNode, AudienceFilterError, audienceCount, type FilterCatalogue, parseAudienceFilter, parseAudienceFilterVersion } from '@meld/filters';
import { BadRequestException, ConflictException } from '@nestjs/common';
import type { Segment } from './segment.schema';

/**
 * A segment's filter as stored: checked against the project catalogue, storable and countable,
 * version made explicit. A bad node is 400 naming its path from the body (`filter.root.children[0].key`).
 */
export function checkedFilter(filter: { version?: string; root: unknown }, catalogue: FilterCatalogue, projectId: string): Segment['filter'] {
  try {
    parseAudienceFilterVersion(filter.version, 'filter.version');
    const root = parseAudienceFilter(filter.root, catalogue, 'filter.root');
    const nul = nulPath(filter.root, 'filter.root');
    if (nul) throw new AudienceFilterError(nul, 'must not contain the NUL character (U+0000): a segment is stored as jsonb, which cannot hold it');
    assertCountable(projectId, root);
  } catch (err) {
    if (err instanceof AudienceFilterError) throw new BadRequestException({ message: `invalid filter: ${err.message}`, details: err.details });
    throw err;
  }
  return { version: AUDIENCE_FILTER_VERSION, root: filter.root };
}

/**
 * The segment's count fits what ClickHouse parses (ADR 0058): a filter within the grammar's limits
 * can still compile to more (a group_event counted names its events twice), and saved, it could
 * never be counted, every count a 400 naming a `root` its request does not hold.
 */
function assertCountable(projectId: string, root: AudienceFilterNode): void {
  try {
    audienceCount({ projectId, root, counts: [['matching']] });
  } catch (err) {
    if (!(err instanceof AudienceFilterError)) throw err;
    throw new AudienceFilterError('filter.root', `the filter is too large: its count's query would exceed ${AUDIENCE_FILTER_LIMITS.maxSqlBytes} bytes; use fewer or shorter values`);
  }
}

/**
 * Path of the first string holding U+0000 in a parsed root (a condition value: the grammar's
 * other strings are catalogue names, operators and dates), or null. A count may compare with it;
 * Postgres' jsonb refuses it, which the error net reports without naming the field.
 */
function nulPath(value: unknown, path: string): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (Array.isArray(value)) return value.reduce<string | null>((found, v, i) => found ?? nulPath(v, `${path}[${i}]`), null);
  if (typeof value === 'object' && value !== null) return Object.entries(value).reduce<string | null>((found, [k, v]) => found ?? nulPath(v, `${path}.${k}`), null);
  return null;
}

/**
 * A stored filter the catalogue no longer accepts (an attribute or event type removed since):
 * the request is fine, the segment is not, so 409 naming the path, to be fixed with an update.
 */
export function assertStillValid(segment: Segment, catalogue: FilterCatalogue): void {
  try {
    parseAudienceFilter(segment.filter.root, catalogue, 'filter.root');
  } catch (err) {
    if (err instanceof AudienceFilterError) throw new ConflictException({ message: `the segment's filter no longer fits the project catalogue: ${err.message}`, details: err.details });
    throw err;
  }
}
