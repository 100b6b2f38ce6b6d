import type { Sql } from '@meld/clickhouse';
import { join } from '@meld/clickhouse';
import { parseAudienceFilterVersion } from '@meld/filters';
import { parseInput } from '@meld/platform';
import { Injectable } from '@nestjs/common';
import { AudienceRoots, filterErrorsAs400 } from '../../audience-roots';
import { type ChannelCompliance, type ComplianceChannel, type ComplianceMode, type ConsentReading, FilterComplianceSchema, channelCounts, channelFigures, complianceCondition, consentColumns, suppressionColumns } from '../../compliance';
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
 * channel's figures add up to the root's count whatever else was asked. Consent reads through
 * the project's marketing scopes, which come with the catalogue: no read of their own, and at
 * most as old as the cached catalogue (ADRs 0232, 0347).
 */
@Injectable()
export class CountAudienceUseCase {
  constructor(
    private readonly repository: CountRepository,
    private readonly roots: AudienceRoots,
    private readonly catalogues: FilterCatalogueCache,
  ) {}

  async execute(command: CountAudienceCommand): Promise<CountAudienceResult> {
    await filterErrorsAs400(() => parseAudienceFilterVersion(command.version));
    const compliance = parseInput(FilterComplianceSchema.optional(), command.filterCompliance, 'filterCompliance') ?? {};
    const channels = Object.entries(compliance).filter(([, m]) => m !== undefined) as Array<[ComplianceChannel, ComplianceMode]>;
    const { root, catalogue: parsedWith } = await this.roots.resolve(command);
    const counts: Array<readonly [string, Sql?]> = [MATCHING];
    if (channels.length) {
      // The catalogue names the slot columns of the consents and suppressions and carries the project's consent scopes (ADR 0347).
      const catalogue = parsedWith ?? command.catalogue ?? (await this.catalogues.cached(command.projectId));
      const consent: ConsentReading = { columns: consentColumns(catalogue), scopes: catalogue.consentScopes, suppressed: suppressionColumns(catalogue) };
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
}
