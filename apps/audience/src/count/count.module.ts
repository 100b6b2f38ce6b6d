import { Module } from '@nestjs/common';
import { CountController } from './count.controller';
import { CountRepository } from './count.repository';
import { FilterCatalogueCache } from './filter-catalogue.cache';
import { FilterCatalogueRepository } from './filter-catalogue.repository';
import { CountAudienceUseCase } from './usecases/count-audience/count-audience.usecase';

/**
 * `POST /v1/project/:project/audience/count`. Exports the use case and the filter catalogue:
 * other features count through it (a segment's count), so the compliance rules live in one place.
 */
@Module({ controllers: [CountController], providers: [CountRepository, FilterCatalogueRepository, FilterCatalogueCache, CountAudienceUseCase], exports: [CountAudienceUseCase, FilterCatalogueRepository] })
export class CountModule {}
