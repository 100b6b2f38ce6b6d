import { contactDataView, type Principal } from '@meld/auth';
import { sampleCondition, sampleQualifier, samplingPlan } from '@meld/clickhouse';
import { BadRequestException, Injectable } from '@nestjs/common';
import { filterErrorsAs400, ProbeRootParser } from '../shared/probe-root';
import { CoverageContextRepository } from './coverage-context.repository';
import { type DataSourceRow, ProjectDataSources, resolveDataSource } from '../shared/data-sources';
import { type AttributeFigures, coverageEntry } from './coverage-entry';
import { ProbeReads } from '../shared/probe-reads';
import type { Coverage, CoverageInput } from './coverage.schema';
import { distinctQuery, figuresQuery, membershipCondition, otherQuery, type Population, topValuesQuery } from './coverage-sql';
import { MAX_PROFILED_ATTRIBUTES, type ProfiledAttribute, selectAttributes, unknownAttributes } from './profiled-attributes';
import { TOP_VALUES_OMITTED, reasonAfterMeasuring, reasonBeforeMeasuring } from './top-values-policy';

export const TOP_VALUES_LIMIT = 10;

export interface CoverageCommand {
  projectId: string;
  principal: Principal;
  input: CoverageInput;
  /** Reference time of relative filter dates and of computedAt. */
  now: Date;
}

/** The Coverage envelope before the cache adds `cached`, `computedAgo` and the refresh fields. */
export type ComputedCoverage = Omit<Coverage, 'cached' | 'computedAgo' | 'refreshDeclined' | 'nextRefreshIn'>;

/**
 * POST /audience/coverage, computed (probe rules 4-10, 14): the denominator and distinct values
 * over every contact, the rest over the sample of the denominator's band (ADR 0161), projected
 * with the error bars of ADR 0162; top values withheld by rule 7 and the data mode, which in a
 * withheld view also drops the number stats (ADR 0164).
 */
@Injectable()
export class CoverageUseCase {
  constructor(
    private readonly roots: ProbeRootParser,
    private readonly context: CoverageContextRepository,
    private readonly reads: ProbeReads,
    private readonly dataSources: ProjectDataSources,
  ) {}

  async execute({ projectId, principal, input, now }: CoverageCommand): Promise<ComputedCoverage> {
    const root = await this.roots.parse(projectId, input, principal);
    const [catalogue, merging, dataSources] = await Promise.all([this.context.attributes(projectId), this.context.mergingAttributes(projectId), input.datasource ? this.dataSources.list(projectId) : undefined]);
    const unknown = input.attributes ? unknownAttributes(catalogue, input.attributes) : [];
    if (unknown.length) {
      const fields = unknown.map((u) => ({ path: `attributes[${u.index}]`, message: `unknown attribute "${u.uid}"` }));
      throw new BadRequestException({ message: `invalid body: ${fields.map((f) => `${f.path}: ${f.message}`).join('; ')}`, details: { fields } });
    }
    const matched = input.datasource ? resolveDataSource(input.datasource, dataSources!) : undefined;
    const { attributes, leftOut } = selectAttributes(catalogue, merging, input.attributes);
    const population: Population = { projectId, root, now, where: matched ? membershipCondition(projectId, matched.map((d) => d.id)) : undefined };

    // Each read holds the root beside its columns (audienceSelect checks the whole); one that would
    // pass the bound of a filter's query is the 400 at `root` of a filter too large (ADR 0058), with
    // the path like any bad node. A root too large itself is refused at the first read, before it runs.
    const sketch = await this.reads.row(filterErrorsAs400(() => distinctQuery(population, attributes)));
    const contacts = sketch.get('contacts') ?? 0;
    const plan = samplingPlan(contacts);
    const sample = sampleCondition(plan);
    const counted = await this.reads.row(filterErrorsAs400(() => figuresQuery(population, attributes, sample)));
    const scanned = counted.get('scanned') ?? 0;
    const piiAccess = contactDataView(principal);

    const figures: AttributeFigures[] = attributes.map((a, i) => {
      const observedFilled = counted.get(`f${i}`) ?? 0;
      const distinct = sketch.get(`d${i}`);
      const estimatedFilled = scanned ? (observedFilled / scanned) * contacts : 0;
      return {
        observedFilled,
        distinct,
        avg: counted.get(`avg${i}`),
        min: counted.get(`min${i}`),
        max: counted.get(`max${i}`),
        // Withheld: no value is listed, so none is read (ADR 0164).
        omitted: piiAccess === 'withheld' ? TOP_VALUES_OMITTED.dataMode : (reasonBeforeMeasuring(a) ?? reasonAfterMeasuring(distinct, estimatedFilled)),
      };
    });
    await this.topValues(population, attributes, figures, sample);

    const measure = { plan, population: contacts, scanned, piiAccess };
    const definition = denominatorDefinition(root !== undefined, matched);
    return {
      computedAt: now.toISOString(),
      denominator: { count: contacts, definition },
      sampling: { applied: plan.applied, fraction: plan.fraction, buckets: plan.buckets, band: plan.band, scanned, scaled: plan.applied, minReliableCount: plan.minReliableCount },
      attributes: attributes.map((a, i) => coverageEntry(a, figures[i], measure)) as Coverage['attributes'],
      ...(matched ? { datasource: { query: input.datasource!, matched, meaning: `contacts ${matched.map((d) => `"${d.name}"`).join(' or ')} contributed to (membership: every attribute of such a contact counts, whichever source supplied it; probe rule 6)` } } : {}),
      ...(leftOut.length ? { truncated: { limit: MAX_PROFILED_ATTRIBUTES, attributes: leftOut } } : {}),
      summary: `${attributes.length} attribute${attributes.length === 1 ? '' : 's'} profiled over ${definition}${plan.applied ? `, ${sampleQualifier(plan)}` : ', exact'}${leftOut.length ? `; ${leftOut.length} more left out by the cap of ${MAX_PROFILED_ATTRIBUTES}` : ''}.`,
    };
  }

  /** Fills `top` (and `observedOther` of multivalue attributes) of the attributes whose values are listed. */
  private async topValues(population: Population, attributes: ProfiledAttribute[], figures: AttributeFigures[], sample: Population['where']): Promise<void> {
    const listed = attributes.map((attribute, index) => ({ index, attribute })).filter(({ index }) => !figures[index].omitted);
    if (!listed.length) return;
    const rows = await this.reads.rows<{ attribute: number; value: string; hash: string; contacts: string }>(filterErrorsAs400(() => topValuesQuery(population, listed, sample, TOP_VALUES_LIMIT)));
    const hashes = new Map<number, bigint[]>(listed.map(({ index }) => [index, []]));
    for (const { index } of listed) figures[index].top = [];
    for (const r of rows) {
      figures[Number(r.attribute)].top!.push({ value: r.value, contacts: Number(r.contacts) });
      hashes.get(Number(r.attribute))!.push(BigInt(r.hash));
    }
    const multivalue = listed.filter(({ attribute }) => attribute.multivalue).map(({ index, attribute }) => ({ index, attribute, listed: hashes.get(index)! }));
    if (!multivalue.length) return;
    const other = await this.reads.row(filterErrorsAs400(() => otherQuery(population, multivalue, sample)));
    for (const { index } of multivalue) figures[index].observedOther = other.get(`o${index}`) ?? 0;
  }
}

function denominatorDefinition(filtered: boolean, matched: DataSourceRow[] | undefined): string {
  let text = filtered ? 'current audience contacts matching the filter' : 'current audience contacts';
  if (matched) text += `${filtered ? ' and' : ''} that ${matched.map((d) => `"${d.name}"`).join(' or ')} contributed to`;
  return text;
}
