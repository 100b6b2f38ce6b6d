import { AUDIENCE_FILTER_VERSION, AudienceFilterError, type FilterCatalogue, parseAudienceFilter, parseAudienceFilterVersion } from '@meld/filters';
import { BadRequestException, ConflictException } from '@nestjs/common';
import type { Segment } from './segment.schema';

/**
 * A segment's filter as stored: checked against the project catalogue, version made explicit.
 * A bad node is 400 naming its path from the body (`filter.root.children[0].key`).
 */
export function checkedFilter(filter: { version?: string; root: unknown }, catalogue: FilterCatalogue): Segment['filter'] {
  try {
    parseAudienceFilterVersion(filter.version, 'filter.version');
    parseAudienceFilter(filter.root, catalogue, 'filter.root');
  } catch (err) {
    if (err instanceof AudienceFilterError) throw new BadRequestException({ message: `invalid filter: ${err.message}`, details: err.details });
    throw err;
  }
  return { version: AUDIENCE_FILTER_VERSION, root: filter.root };
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
