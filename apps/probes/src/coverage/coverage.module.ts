import { Module } from '@nestjs/common';
import { ProbesSharedModule } from '../shared/probes-shared.module';
import { CoverageContextRepository } from './coverage-context.repository';
import { CoverageController } from './coverage.controller';
import { CoverageUseCase } from './coverage.usecase';

/** `POST /v1/project/:project/audience/coverage`. */
@Module({ imports: [ProbesSharedModule], controllers: [CoverageController], providers: [CoverageContextRepository, CoverageUseCase] })
export class CoverageModule {}
