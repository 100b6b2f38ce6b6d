import { maySearchByPii, type Principal } from '@meld/auth';
import { FilterCatalogueRepository } from '@meld/db';
import { type AudienceFilterNode, AudienceFilterError, parseAudienceFilter, parseAudienceFilterVersion, piiConditionPath } from '@meld/filters';
import { BadRequestException, ForbiddenException, Injectable } from '@nestjs/common';

/** A probe's `root` (an audience filter, as for a count): 400 naming the bad node, 403 on an email or phone condition without PII access (ADR 0164). */
@Injectable()
export class ProbeRootParser {
  constructor(private readonly catalogues: FilterCatalogueRepository) {}

  async parse(projectId: string, input: { version?: unknown; root?: unknown }, principal: Principal): Promise<AudienceFilterNode | undefined> {
    try {
      parseAudienceFilterVersion(input.version);
      if (input.root === undefined) return undefined;
      const catalogue = await this.catalogues.catalogue(projectId);
      const root = parseAudienceFilter(input.root, catalogue);
      const path = maySearchByPii(principal) ? null : piiConditionPath(root, catalogue);
      if (path) throw new ForbiddenException({ message: `${path}: filtering on an email or phone attribute needs the Basic or Full data level and a project in normal data mode (dataPolicy.mayReadPii)`, details: { path } });
      return root;
    } catch (err) {
      throw asHttpError(err);
    }
  }
}

/** `build`'s result; a filter the compiler refuses while a probe builds its reads (a query too large, ADR 0058) is the 400 of a bad node, naming its path. */
export function filterErrorsAs400<T>(build: () => T): T {
  try {
    return build();
  } catch (err) {
    throw asHttpError(err);
  }
}

function asHttpError(err: unknown): unknown {
  return err instanceof AudienceFilterError ? new BadRequestException({ message: `invalid filter: ${err.message}`, details: err.details }) : err;
}
