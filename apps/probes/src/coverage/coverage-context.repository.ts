import { CatalogueRepository, DATA_SOURCE } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { CatalogueAttribute } from './profiled-attributes';

/** What a coverage call reads from Postgres besides the filter catalogue. */
@Injectable()
export class CoverageContextRepository {
  constructor(
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    private readonly catalogue: CatalogueRepository,
  ) {}

  async attributes(projectId: string): Promise<CatalogueAttribute[]> {
    return (await this.catalogue.listAttributes(projectId)).map(({ uid, label, type, multivalue, enabled, visible, internal, unique, slot }) => ({ uid, label, type, multivalue, enabled, visible, internal, unique, slot }));
  }

  async mergingAttributes(projectId: string): Promise<string[]> {
    const [row]: Array<{ merging_attributes: string[] }> = await this.ds.query(`SELECT merging_attributes FROM projects WHERE id = $1`, [projectId]);
    return row?.merging_attributes ?? [];
  }
}
