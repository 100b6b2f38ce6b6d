import { hasScopes, maySearchByPii, type Principal } from '@meld/auth';
import type { Scope } from '@meld/contracts';
import { type AudienceFilterNode, AudienceFilterError, eventConditionPath, parseAudienceFilter, parseAudienceFilterVersion, piiConditionPath } from '@meld/filters';
import { BadRequestException, ForbiddenException, Injectable } from '@nestjs/common';
import { FilterCatalogueCache } from './filter-catalogue.cache';
import type { AudienceCatalogue } from './filter-catalogue.repository';

export interface RootRequest {
  projectId: string;
  /** Audience filter version; absent or `0.0.1`. */
  version?: unknown;
  /** Audience filter root (system.md §4); absent: the whole audience. */
  root?: unknown;
  /** The caller, when a request asks: conditions on email or phone attributes then need `maySearchByPii`. */
  principal?: Principal;
  /**
   * The request answers contacts or values of theirs (lists, aggregations), not a size: a node on
   * events then needs PROJECT_AUDIENCE_DATA_EVENTS too (ADR 0344). A count leaves it out (ADR 0053).
   */
  returnsContactData?: boolean;
  /** JSON path of `root` in the caller's request, for error paths (default `root`). */
  rootPath?: string;
  /** The project's catalogue when the caller has just read it; read otherwise. */
  catalogue?: AudienceCatalogue;
}

/** What a filter on events needs where the request returns contact data (ADR 0344). */
const EVENT_DATA_SCOPES: readonly Scope[] = ['PROJECT_AUDIENCE_DATA_EVENTS'];

/**
 * An audience filter root as every reader of the audience takes it (count, segments, lists): the
 * version checked, the root parsed against the project's catalogue (400 naming the node), a
 * condition on an email or phone attribute refused (403) to a caller who may not search by them,
 * and, where contacts or their values are returned, a node on events to a caller without
 * PROJECT_AUDIENCE_DATA_EVENTS (403).
 */
@Injectable()
export class AudienceRoots {
  constructor(private readonly catalogues: FilterCatalogueCache) {}

  async resolve(request: RootRequest): Promise<{ root?: AudienceFilterNode; catalogue?: AudienceCatalogue }> {
    await filterErrorsAs400(() => parseAudienceFilterVersion(request.version));
    if (request.root === undefined) return {};
    const parsed = await this.parse(request, request.catalogue ?? (await this.catalogues.cached(request.projectId)));
    if (request.principal && !maySearchByPii(request.principal)) {
      const path = piiConditionPath(parsed.root, parsed.catalogue, request.rootPath);
      if (path) {
        throw new ForbiddenException({
          message: `${path}: filtering on an email or phone attribute needs the Basic or Full data level and a project in normal data mode (dataPolicy.mayReadPii)`,
          details: { path },
        });
      }
    }
    const missing = request.principal && request.returnsContactData ? hasScopes(request.principal, EVENT_DATA_SCOPES) : [];
    const eventPath = missing.length ? eventConditionPath(parsed.root, request.rootPath) : null;
    if (eventPath) {
      throw new ForbiddenException({
        message: `${eventPath}: filtering on events needs ${missing.join(', ')} (missing scope) where contacts or their values are returned; a count does not`,
        details: { path: eventPath, missingScopes: missing },
      });
    }
    return parsed;
  }

  /**
   * The root checked against the catalogue; a refusal by the cached catalogue is only final after
   * one new read, so a name declared since it was cached is never refused (ADR 0232).
   */
  private async parse(request: RootRequest, cached: AudienceCatalogue): Promise<{ root: AudienceFilterNode; catalogue: AudienceCatalogue }> {
    const parse = (catalogue: AudienceCatalogue) => parseAudienceFilter(request.root, catalogue, request.rootPath);
    if (!request.catalogue) {
      try {
        return { root: parse(cached), catalogue: cached };
      } catch (err) {
        if (!(err instanceof AudienceFilterError)) throw err;
      }
    }
    const catalogue = request.catalogue ?? (await this.catalogues.reload(request.projectId));
    return { root: await filterErrorsAs400(() => parse(catalogue)), catalogue };
  }
}

/** A filter the lib refuses (a bad node, a query too large) is a 400 naming its path (and what is allowed there). */
export async function filterErrorsAs400<T>(run: () => T | Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof AudienceFilterError) throw new BadRequestException({ message: `invalid filter: ${err.message}`, details: err.details });
    throw err;
  }
}
