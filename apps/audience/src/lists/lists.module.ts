import { Module } from '@nestjs/common';
import { CountModule } from '../count/count.module';
import { SegmentsModule } from '../segments/segments.module';
import { AudiencePages } from './audience-pages';
import { ListsController } from './lists.controller';
import { ListsRepository } from './lists.repository';
import { ScrollAudience } from './usecases/scroll-audience/scroll-audience.usecase';
import { SearchAudience } from './usecases/search-audience/search-audience.usecase';
import { SearchSort } from './usecases/search-audience/search-sort';

/** `/v1/project/:project/audience/scroll` and `/search`: lists of contacts, filtered as counts are (ADR 0330); a search may be sorted (ADR 0337). */
@Module({
  imports: [CountModule, SegmentsModule],
  controllers: [ListsController],
  providers: [ListsRepository, AudiencePages, ScrollAudience, SearchAudience, SearchSort],
})
export class ListsModule {}
