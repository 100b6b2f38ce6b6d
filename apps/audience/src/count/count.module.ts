import { Module } from '@nestjs/common';
import { AudienceRoots } from './audience-roots';
import { CountController } from './count.controller';
import { CountRepository } from './count.repository';
import { FilterCatalogueCache } from './filter-catalogue.cache';
import { FilterCatalogueRepository } from './filter-catalogue.repository';
import { CountAudienceUseCase } from './usecases/count-audience/count-audience.usecase';

/**
 * `POST /v1/project/:project/audience/count`. Exports the use case, the filter catalogue and the
 * root parsing: other features count and filter through them (a segment's count, the lists), so
 * the compliance and filter rules live in one place.
 */
@Module({ controllers: [CountController], providers: [CountRepository, FilterCatalogueRepository, FilterCatalogueCache, AudienceRoots, CountAudienceUseCase], exports: [CountAudienceUseCase, FilterCatalogueRepository, FilterCatalogueCache, AudienceRoots, CountRepository] })
export class CountModule {}
