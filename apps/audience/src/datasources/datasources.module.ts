import { Module } from '@nestjs/common';
import { DataSourcesController } from './datasources.controller';
import { DataSourcesRepository } from './datasources.repository';
import { ListDataSources } from './usecases/list-data-sources/list-data-sources.usecase';

/** `GET /v1/project/:project/datasource` (list filter). */
@Module({ controllers: [DataSourcesController], providers: [DataSourcesRepository, ListDataSources] })
export class DataSourcesModule {}
