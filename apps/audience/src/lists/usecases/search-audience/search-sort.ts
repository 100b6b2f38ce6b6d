import { CONTACT_DATA_BLOCKED, contactDataMask, maySearchByPii, type Principal } from '@meld/auth';
import { type AudienceSortKey, catalogueAttributeSql } from '@meld/filters';
import { BadRequestException, ForbiddenException, Injectable } from '@nestjs/common';
import { FilterCatalogueCache } from '../../../count/filter-catalogue.cache';

export interface AskedSortKey {
  attribute: string;
  order: 'asc' | 'desc';
}

const fieldError = (path: string, message: string) => new BadRequestException({ message: `invalid body: ${path}: ${message}`, details: { fields: [{ path, message }] } });

/**
 * A search's `sort` (ADR 0337) checked against the project's catalogue: each key a known,
 * single-valued attribute. An order says something about every contact's value, so it follows
 * the rules of a filter condition on the same attribute: email and phone need `mayReadPii`; and,
 * as aggregations, nothing is ordered in a blocked project.
 */
@Injectable()
export class SearchSort {
  constructor(private readonly catalogues: FilterCatalogueCache) {}

  async keys(principal: Principal, projectId: string, asked: readonly AskedSortKey[]): Promise<AudienceSortKey[]> {
    if (!contactDataMask(principal)) throw new ForbiddenException(CONTACT_DATA_BLOCKED);
    const found = await this.catalogues.attributes(projectId, asked.map((k) => k.attribute));
    return asked.map((key, i) => {
      const path = `sort[${i}].attribute`;
      const attribute = found[i];
      if (!attribute) throw fieldError(path, `unknown attribute "${key.attribute}"`);
      if (attribute.multivalue) throw fieldError(path, `"${attribute.uid}" is multivalue: a contact would have several places in the order`);
      if ((attribute.type === 'email' || attribute.type === 'phone') && !maySearchByPii(principal)) {
        throw new ForbiddenException({
          message: `${path}: sorting by an email or phone attribute needs the Basic or Full data level and a project in normal data mode (dataPolicy.mayReadPii)`,
          details: { path },
        });
      }
      return { attribute: catalogueAttributeSql(attribute), descending: key.order === 'desc' };
    });
  }
}
