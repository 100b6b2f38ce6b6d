import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { FilterCatalogueRepository } from '../../../count/filter-catalogue.repository';
import { CountAudienceUseCase } from '../../../count/usecases/count-audience/count-audience.usecase';
import { assertStillValid } from '../../segment-filter';
import { SegmentsRepository } from '../../segments.repository';
import type { CountSegmentCommand } from './count-segment.command';

/**
 * The live, exact count of a segment's audience: the audience count of its stored filter
 * (same compliance rules; conditions on email or phone need the caller's mayReadPii, as
 * for a direct count, or a saved segment would be a way around it).
 */
@Injectable()
export class CountSegment {
  constructor(
    private readonly segments: SegmentsRepository,
    private readonly catalogues: FilterCatalogueRepository,
    private readonly countAudience: CountAudienceUseCase,
  ) {}

  async execute({ principal, projectId, segmentId, query }: CountSegmentCommand) {
    const segment = await this.segments.find(projectId, segmentId);
    if (!segment) throw new NotFoundException('segment not found');
    const compliance = complianceOf(query);
    const catalogue = await this.catalogues.catalogue(projectId);
    assertStillValid(segment, catalogue);
    const { totalHits, compliance: figures } = await this.countAudience.execute({ projectId, version: segment.filter.version, root: segment.filter.root, filterCompliance: compliance, principal, rootPath: 'filter.root', catalogue });
    return { metadata: figures ? { totalHits, compliance: figures } : { totalHits } };
  }
}

/** The query parameters the count takes: `filterCompliance` alone, at most once. */
const PARAMETERS: ReadonlySet<string> = new Set(['filterCompliance']);

/**
 * The `filterCompliance` of the query. Every other parameter is refused by name: the count's body
 * is strict, and a compliance filter written another way (`filterCompliance[sms]=opt-in`, as qs
 * encodes an object) would otherwise be dropped, answering the whole audience as if it were the
 * opted-in one.
 */
function complianceOf(query: Readonly<Record<string, unknown>>): Record<string, string> | undefined {
  const unknown = Object.keys(query).find((k) => !PARAMETERS.has(k));
  if (unknown !== undefined) throw parameterError(unknown, `${clip(unknown)}: unknown query parameter; the count takes filterCompliance only (a JSON object, e.g. {"sms":"opt-in"}, URL-encoded)`);
  const text = query.filterCompliance;
  if (text === undefined) return undefined;
  if (typeof text !== 'string') throw parameterError('filterCompliance', 'filterCompliance: is given more than once');
  try {
    return JSON.parse(text);
  } catch {
    throw parameterError('filterCompliance', 'filterCompliance: is not JSON (e.g. {"sms":"opt-in"}, URL-encoded)');
  }
}

const parameterError = (parameter: string, message: string) => new BadRequestException({ message, details: { parameter } });
/** A parameter name is the caller's text: at most 64 characters of it go into the message. */
const clip = (name: string) => JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);
