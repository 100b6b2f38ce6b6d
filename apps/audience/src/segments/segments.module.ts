import { Module } from '@nestjs/common';
import { CountModule } from '../count/count.module';
import { AudienceSelections } from './audience-selection';
import { SegmentsController } from './segments.controller';
import { SegmentsRepository } from './segments.repository';
import { CountSegment } from './usecases/count-segment/count-segment.usecase';
import { CreateSegment } from './usecases/create-segment/create-segment.usecase';
import { DeleteSegment } from './usecases/delete-segment/delete-segment.usecase';
import { GetSegment } from './usecases/get-segment/get-segment.usecase';
import { ListSegments } from './usecases/list-segments/list-segments.usecase';
import { UpdateSegment } from './usecases/update-segment/update-segment.usecase';

/** `/v1/project/:project/segment` CRUD, list (list filter) and `/:segmentId/count` (through CountModule). */
@Module({
  imports: [CountModule],
  controllers: [SegmentsController],
  providers: [SegmentsRepository, AudienceSelections, CreateSegment, GetSegment, UpdateSegment, DeleteSegment, ListSegments, CountSegment],
  // Lists and aggregations take a segment in place of a root (ADRs 0330, 0333, 0335).
  exports: [SegmentsRepository, AudienceSelections],
})
export class SegmentsModule {}
