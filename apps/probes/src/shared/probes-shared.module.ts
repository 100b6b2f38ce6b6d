import { CatalogueRepository, FilterCatalogueRepository } from '@meld/db';
import { Module } from '@nestjs/common';
import { ProjectDataSources } from './data-sources';
import { ProbeCache } from './probe-cache';
import { ProbeClock } from './probe-clock';
import { ProbeReads } from './probe-reads';
import { ProbeRootParser } from './probe-root';

const shared = [CatalogueRepository, FilterCatalogueRepository, ProjectDataSources, ProbeReads, ProbeClock, ProbeCache, ProbeRootParser];

/** What every probe surface shares: one clock and one cache (so the throttle is per project and surface, ADR 0165), the reads, the catalogue. */
@Module({ providers: shared, exports: shared })
export class ProbesSharedModule {}
