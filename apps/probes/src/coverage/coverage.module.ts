import { CatalogueRepository, FilterCatalogueRepository } from '@meld/db';
import { Module } from '@nestjs/common';
import { ProbeCache } from '../shared/probe-cache';
import { ProbeClock } from '../shared/probe-clock';
import { CoverageContextRepository } from './coverage-context.repository';
import { CoverageController } from './coverage.controller';
import { CoverageRepository } from './coverage.repository';
import { CoverageUseCase } from './coverage.usecase';

/** `POST /v1/project/:project/audience/coverage`. */
@Module({ controllers: [CoverageController], providers: [CatalogueRepository, FilterCatalogueRepository, CoverageContextRepository, CoverageRepository, CoverageUseCase, ProbeClock, ProbeCache] })
export class CoverageModule {}
