import { CONTACT_DATA_BLOCKED, contactDataMask, maySearchByPii, type Principal } from '@meld/auth';
import { catalogueAttributeSql, type FilterCatalogue, valueKindOf } from '@meld/filters';
import { BadRequestException, ForbiddenException, Injectable } from '@nestjs/common';
import { filterErrorsAs400 } from '../../../count/audience-roots';
import { FilterCatalogueCache } from '../../../count/filter-catalogue.cache';
import { AudienceSelections } from '../../../segments/audience-selection';
import { maskedBuckets } from '../../../shared/masked-buckets';
import { AggregationsRepository } from '../../aggregations.repository';
import type { AggregateAudienceInput, AudienceAggregations } from '../../aggregations.schema';

type CatalogueAttribute = FilterCatalogue['attributes'][number];
type Asked = AggregateAudienceInput['aggregations'][number];

const fieldError = (path: string, message: string) => new BadRequestException({ message: `invalid body: ${path}: ${message}`, details: { fields: [{ path, message }] } });

/**
 * `POST /audience/aggregations` (ADR 0333): terms (the most frequent values) and stats of
 * attributes over the current contacts a filter or saved segment selects, exact, from the snapshot the count
 * reads. Aggregates are contact-derived: a blocked project is refused, email or phone
 * attributes need `mayReadPii`, as conditions on them do, and terms are shown through the
 * caller's mask (ADR 0121): a `_user_id` that is a phone, `_ds_contact_ids` or a custom attribute
 * holding emails is masked in anonymized mode or below Basic. Stats read numbers and dates only.
 */
@Injectable()
export class AggregateAudience {
  constructor(
    private readonly selections: AudienceSelections,
    private readonly catalogues: FilterCatalogueCache,
    private readonly repository: AggregationsRepository,
  ) {}

  async execute(principal: Principal, projectId: string, input: AggregateAudienceInput): Promise<AudienceAggregations> {
    const mask = contactDataMask(principal);
    if (!mask) throw new ForbiddenException(CONTACT_DATA_BLOCKED);
    const { root } = await this.selections.resolve(principal, projectId, input);
    const attributes = await this.attributes(projectId, input.aggregations);
    const names = input.aggregations.map((a) => a.name ?? `${a.type}_${a.attribute}`);
    names.forEach((n, i) => {
      if (names.indexOf(n) !== i) throw fieldError(`aggregations[${i}].name`, `"${n}" is used twice: name the aggregations`);
    });
    input.aggregations.forEach((a, i) => this.check(principal, a, attributes[i], i));
    const stored = attributes.map(catalogueAttributeSql);
    // Every query is built before any runs: each holds the root, the terms and stats ones beside more
    // than the counts (up to a few hundred bytes), so a root whose counts fit can make one of them pass
    // the bound of a filter's query; that is the 400 at `root` (ADR 0058), before any read.
    const queries = await filterErrorsAs400(() => ({
      counts: this.repository.countsQuery(projectId, root, stored.map((s) => s.present)),
      each: input.aggregations.map((a, i) => (a.type === 'terms' ? this.repository.termsQuery(projectId, root, stored[i], attributes[i].multivalue, a.size) : this.repository.statsQuery(projectId, root, stored[i]))),
    }));
    const counts = await this.repository.counts(queries.counts);
    const matching = Number(counts.matching ?? 0);
    const results = await Promise.all(
      input.aggregations.map(async (a, i) => {
        const attribute = attributes[i];
        if (a.type === 'terms') {
          const withValue = Number(counts[`p${i}`] ?? 0);
          const rows = await this.repository.terms(queries.each[i]);
          const buckets = maskedBuckets(rows.map((r) => ({ value: typed(r.value, attribute), count: Number(r.n) })), mask);
          return { name: names[i], type: 'terms' as const, attribute: a.attribute, withValue, missing: matching - withValue, buckets };
        }
        const s = await this.repository.stats(queries.each[i]);
        const date = valueKindOf(attribute.type) === 'date';
        const edge = (x: number | null) => (x === null ? null : date ? new Date(Number(x) * 1000).toISOString() : Number(x));
        return { name: names[i], type: 'stats' as const, attribute: a.attribute, count: Number(s.count), min: edge(s.min), max: edge(s.max), avg: date || s.avg === null ? null : Number(s.avg), sum: date || s.sum === null ? null : Number(s.sum) };
      }),
    );
    return { metadata: { matching, aggregations: results } };
  }

  /** Each aggregation's attribute from the project's catalogue; one reload before an unknown one is refused (ADR 0232). */
  private async attributes(projectId: string, asked: readonly Asked[]): Promise<CatalogueAttribute[]> {
    const found = await this.catalogues.attributes(projectId, asked.map((a) => a.attribute));
    return found.map((a, i) => {
      if (!a) throw fieldError(`aggregations[${i}].attribute`, `unknown attribute "${asked[i].attribute}"`);
      return a;
    });
  }

  private check(principal: Principal, asked: Asked, attribute: CatalogueAttribute, i: number): void {
    if ((attribute.type === 'email' || attribute.type === 'phone') && !maySearchByPii(principal)) {
      throw new ForbiddenException({
        message: `aggregations[${i}].attribute: aggregating an email or phone attribute needs the Basic or Full data level and a project in normal data mode (dataPolicy.mayReadPii)`,
        details: { path: `aggregations[${i}].attribute` },
      });
    }
    if (asked.type === 'stats') {
      const kind = valueKindOf(attribute.type);
      if ((kind !== 'number' && kind !== 'date') || attribute.multivalue) throw fieldError(`aggregations[${i}].attribute`, `stats need a single-valued number or date attribute; "${attribute.uid}" is ${attribute.multivalue ? 'multivalue ' : ''}${attribute.type}`);
    } else if (valueKindOf(attribute.type) === 'date') {
      throw fieldError(`aggregations[${i}].attribute`, `terms of a date attribute ("${attribute.uid}") would list instants: use stats`);
    }
  }
}

/** A bucket's value in the attribute's own type (the query gives text). */
function typed(value: string, attribute: CatalogueAttribute): string | number | boolean {
  const kind = valueKindOf(attribute.type);
  if (kind === 'number') return Number(value);
  if (kind === 'boolean') return value === '1';
  return value;
}
