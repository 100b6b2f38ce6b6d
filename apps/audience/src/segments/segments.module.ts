import { Module } from '@nestjs/common';
import { CountModule } from '../count/count.module';
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
  providers: [SegmentsRepository, CreateSegment, GetSegment, UpdateSegment, DeleteSegment, ListSegments, CountSegment],
  // The lists read a segment's filter (ADR 0330).
  exports: [SegmentsRepository],
})
export class SegmentsModule {}
