import { Module } from '@nestjs/common';
import { CountController } from './count.controller';
import { CountRepository } from './count.repository';
import { CountAudienceUseCase } from './usecases/count-audience/count-audience.usecase';

/**
 * `POST /v1/project/:project/audience/count`. Exports the use case: other features count
 * through it (a segment's count), so the compliance rules live in one place.
 */
@Module({ controllers: [CountController], providers: [CountRepository, CountAudienceUseCase], exports: [CountAudienceUseCase] })
export class CountModule {}
