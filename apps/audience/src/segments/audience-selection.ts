import type { Principal } from '@meld/auth';
import { AUDIENCE_FILTER_VERSION, type AudienceFilterNode } from '@meld/filters';
import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { AudienceRoots } from '../count/audience-roots';
import { FilterCatalogueRepository } from '../count/filter-catalogue.repository';
import { assertStillValid } from './segment-filter';
import { SegmentsRepository } from './segments.repository';

/** What a request names its contacts by: a filter root, or a saved segment (not both). */
export interface AudienceSelectionInput {
  version?: unknown;
  root?: unknown;
  segment?: string;
}

/**
 * The audience filter of a list or aggregation request (ADRs 0330, 0333, 0335): its own `root`,
 * or the stored filter of the segment it names, checked as a segment's count checks it (404 for
 * an unknown segment, 409 for one the catalogue no longer accepts). Each of these requests
 * returns contacts or their values, so a node on events needs PROJECT_AUDIENCE_DATA_EVENTS,
 * in a saved segment as in a root (ADR 0344). `key` identifies the filter for a scroll id's digest
 * (a segment's: its id and its stored filter).
 */
@Injectable()
export class AudienceSelections {
  constructor(
    private readonly roots: AudienceRoots,
    private readonly segments: SegmentsRepository,
    private readonly catalogues: FilterCatalogueRepository,
  ) {}

  async resolve(principal: Principal, projectId: string, input: AudienceSelectionInput): Promise<{ root?: AudienceFilterNode; key: unknown }> {
    if (input.segment === undefined) {
      const { root } = await this.roots.resolve({ projectId, version: input.version, root: input.root, principal, returnsContactData: true });
      return { root, key: { version: input.version ?? AUDIENCE_FILTER_VERSION, root: input.root ?? null } };
    }
    if (input.root !== undefined || input.version !== undefined) {
      throw new BadRequestException({ message: 'invalid body: segment: send a segment or a root, not both', details: { fields: [{ path: 'segment', message: 'send a segment or a root, not both' }] } });
    }
    const segment = await this.segments.find(projectId, input.segment);
    if (!segment) throw new NotFoundException('segment not found');
    const catalogue = await this.catalogues.catalogue(projectId);
    assertStillValid(segment, catalogue);
    const { root } = await this.roots.resolve({ projectId, version: segment.filter.version, root: segment.filter.root, principal, rootPath: 'filter.root', catalogue, returnsContactData: true });
    // The filter as stored now: a scroll of the segment goes on across a rename, not across a new filter (ADR 0330).
    return { root, key: { segment: segment.id, filter: segment.filter } };
  }
}
