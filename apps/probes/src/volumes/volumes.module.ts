import { Module } from '@nestjs/common';
import { ProbesSharedModule } from '../shared/probes-shared.module';
import { VolumesController } from './volumes.controller';
import { VolumesUseCase } from './volumes.usecase';

/** `POST /v1/project/:project/event/volumes`. */
@Module({ imports: [ProbesSharedModule], controllers: [VolumesController], providers: [VolumesUseCase] })
export class VolumesModule {}
