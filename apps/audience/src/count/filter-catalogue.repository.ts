import { type ConsentScopes, consentScopesOf } from '@meld/contracts';
import { DATA_SOURCE, FilterCatalogueRepository as FilterCatalogueReads, type FilterCatalogueRows } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';

/** A project's catalogue as the audience app reads it: the filter catalogue, and how far each channel's consent reaches. */
export interface AudienceCatalogue extends FilterCatalogueRows {
  /** generalConfig's marketing scopes (ADR 0347): a compliance filter reads consent through them. */
  consentScopes: ConsentScopes;
}

/**
 * The filter catalogue (@meld/db: the probes app parses audience filters against the same one)
 * and, in the same parallel read, the project's consent scopes: the count takes both from one
 * cached read (ADR 0232, ADR 0347), a segment from one read of the moment.
 */
@Injectable()
export class FilterCatalogueRepository {
  private readonly rows: FilterCatalogueReads;

  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {
    this.rows = new FilterCatalogueReads(ds);
  }

  async catalogue(projectId: string): Promise<AudienceCatalogue> {
    const [rows, [project]]: [FilterCatalogueRows, Array<{ general_config: unknown }>] = await Promise.all([
      this.rows.catalogue(projectId),
      this.ds.query(`SELECT general_config FROM projects WHERE id = $1`, [projectId]),
    ]);
    return { ...rows, consentScopes: consentScopesOf(project?.general_config) };
  }
}
