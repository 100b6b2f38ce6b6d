import { maySearchByPii } from '@meld/auth';
import { join, type Sql } from '@meld/clickhouse';
import { type AudienceFilterNode, AudienceFilterError, type FilterCatalogue, parseAudienceFilter, parseAudienceFilterVersion, piiConditionPath } from '@meld/filters';
import { parseInput } from '@meld/platform';
import { BadRequestException, ForbiddenException, Injectable } from '@nestjs/common';
import { type ChannelCompliance, type ComplianceChannel, type ComplianceMode, FilterComplianceSchema, channelCounts, channelFigures, complianceCondition, consentColumns } from '../../compliance';
import { CountRepository, MATCHING } from '../../count.repository';
import { FilterCatalogueCache } from '../../filter-catalogue.cache';
import type { CountAudienceCommand } from './count-audience.command';

export type { CountAudienceCommand } from './count-audience.command';

export interface CountAudienceResult {
  /** Contacts matching the root and every requested channel's compliance filter. */
  totalHits: number;
  /** Per requested channel, the breakdown over the contacts matching the root. */
  compliance?: Partial<Record<ComplianceChannel, ChannelCompliance>>;
}

/**
 * Exact, live count of a project's current audience contacts (never sampled: probe rule 1),
 * narrowed by an audience filter and by compliance per channel, in one ClickHouse query.
 * `totalHits` ANDs the root and every channel's filter (a contact reachable on all of them);
 * `compliance.<channel>` describes the root's audience on that channel alone, so each
 * channel's figures add up to the root's count whatever else was asked.
 */
@Injectable()
export class CountAudienceUseCase {
  constructor(
    private readonly repository: CountRepository,
    private readonly catalogues: FilterCatalogueCache,
  ) {}

  async execute(command: CountAudienceCommand): Promise<CountAudienceResult> {
    await filterErrorsAs400(() => parseAudienceFilterVersion(command.version));
    const compliance = parseInput(FilterComplianceSchema.optional(), command.filterCompliance, 'filterCompliance') ?? {};
    const channels = Object.entries(compliance).filter(([, m]) => m !== undefined) as Array<[ComplianceChannel, ComplianceMode]>;
    let root: AudienceFilterNode | undefined;
    // The catalogue names the slot columns of filtered attributes and of the consents.
    let catalogue: FilterCatalogue | undefined = command.root !== undefined || channels.length ? (command.catalogue ?? (await this.catalogues.cached(command.projectId))) : undefined;
    if (command.root !== undefined && catalogue) {
      ({ root, catalogue } = await this.parseRoot(command, catalogue));
      if (command.principal && !maySearchByPii(command.principal)) {
        const path = piiConditionPath(root, catalogue, command.rootPath);
        if (path) {
          throw new ForbiddenException({
            message: `${path}: filtering on an email or phone attribute needs the Basic or Full data level and a project in normal data mode (dataPolicy.mayReadPii)`,
            details: { path },
          });
        }
      }
    }
    const counts: Array<readonly [string, Sql?]> = [MATCHING];
    if (channels.length) {
      const consent = consentColumns(catalogue!);
      counts.push(['hits', join(channels.map(([ch, m]) => complianceCondition(ch, m, consent)), ' AND ')], ...channels.flatMap(([ch]) => channelCounts(ch, consent)));
    }
    const row = await filterErrorsAs400(() => this.repository.count(command.projectId, root, counts));
    const matching = Number(row.matching ?? 0);
    if (!channels.length) return { totalHits: matching };
    return {
      totalHits: Number(row.hits ?? 0),
      compliance: Object.fromEntries(channels.map(([ch, m]) => [ch, channelFigures(ch, m, row, matching)])),
    };
  }

  /**
   * The root checked against the catalogue; a refusal by the cached catalogue is only final after
   * one new read, so a name declared since it was cached is never refused (ADR 0232).
   */
  private async parseRoot(command: CountAudienceCommand, cached: FilterCatalogue): Promise<{ root: AudienceFilterNode; catalogue: FilterCatalogue }> {
    const parse = (catalogue: FilterCatalogue) => parseAudienceFilter(command.root, catalogue, command.rootPath);
    if (!command.catalogue) {
      try {
        return { root: parse(cached), catalogue: cached };
      } catch (err) {
        if (!(err instanceof AudienceFilterError)) throw err;
      }
    }
    const catalogue = command.catalogue ?? (await this.catalogues.reload(command.projectId));
    return { root: await filterErrorsAs400(() => parse(catalogue)), catalogue };
  }
}

/** A filter the lib refuses (a bad node, a query too large) is a 400 naming its path (and what is allowed there). */
async function filterErrorsAs400<T>(run: () => T | Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof AudienceFilterError) throw new BadRequestException({ message: `invalid filter: ${err.message}`, details: err.details });
    throw err;
  }
}
