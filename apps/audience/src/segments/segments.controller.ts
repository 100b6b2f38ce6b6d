import { ApiPostgresUnavailable, ApiError, ApiErrors, ApiListOperation, ApiOperation, ApiParam, ApiQuery, ApiSuccess, ApiTags, ListQueryString, ApiStoreReadLimits } from '@meld/api';
import { CurrentPrincipal, type Principal, projectOf } from '@meld/auth';
import { parseInput } from '@meld/platform';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { AudienceCountSchema } from '../count/count.schema';
import { SEGMENT_FIELDS } from './segment-fields';
import { segmentView } from './segment-view';
import { CreateSegmentBody, SegmentListSchema, SegmentReadSchema, UpdateSegmentBody } from './segment.schema';
import { CountSegment } from './usecases/count-segment/count-segment.usecase';
import { CreateSegment } from './usecases/create-segment/create-segment.usecase';
import { DeleteSegment } from './usecases/delete-segment/delete-segment.usecase';
import { GetSegment } from './usecases/get-segment/get-segment.usecase';
import { ListSegments } from './usecases/list-segments/list-segments.usecase';
import { UpdateSegment } from './usecases/update-segment/update-segment.usecase';

const BAD_BODY = 'invalid body: a bad or unknown field (`details.fields`), or a filter node that does not fit the grammar or the catalogue (`details.path`, e.g. `filter.root.children[0].key`, and `details.allowed`)';

@ApiTags('segment')
@ApiParam({ name: 'project', description: 'project UID' })
@ApiPostgresUnavailable()
@Controller('v1/project/:project/segment')
export class SegmentsController {
  constructor(
    private readonly createSegment: CreateSegment,
    private readonly getSegment: GetSegment,
    private readonly updateSegment: UpdateSegment,
    private readonly deleteSegment: DeleteSegment,
    private readonly listSegments: ListSegments,
    private readonly countSegment: CountSegment,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Save an audience filter as a segment', description: 'The filter ({version, root}, system design §4) is checked against the project catalogue. Names are labels: two segments may share one. Needs PROJECT_AUDIENCE_WRITE.' })
  @ApiSuccess(201, SegmentReadSchema, 'the segment')
  @ApiError(400, BAD_BODY)
  @ApiErrors(401, 403, 404, 429)
  async create(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @Body({ schema: CreateSegmentBody }) body: unknown) {
    const { entity } = await this.createSegment.execute({ projectId: projectOf(principal, projectUid).id, ...parseInput(CreateSegmentBody, body) });
    return { entity: segmentView(entity, principal) };
  }

  @Get()
  @ApiListOperation({
    summary: "List the project's segments",
    description: 'Oldest first unless `_sort` says otherwise. Needs PROJECT_AUDIENCE_READ.',
    resource: SEGMENT_FIELDS,
    schema: SegmentListSchema,
    page: 'a page of segments',
  })
  async list(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @ListQueryString() queryString: string) {
    const page = await this.listSegments.execute({ projectId: projectOf(principal, projectUid).id, queryString });
    return { ...page, entity: page.entity.map((segment) => segmentView(segment, principal)) };
  }

  @Get(':segmentId')
  @ApiOperation({ summary: 'Read a segment', description: 'Needs PROJECT_AUDIENCE_READ.' })
  @ApiParam({ name: 'segmentId', description: 'segment id' })
  @ApiSuccess(200, SegmentReadSchema, 'the segment')
  @ApiErrors(401, 403, 404, 429)
  async read(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @Param('segmentId') segmentId: string) {
    const { entity } = await this.getSegment.execute({ projectId: projectOf(principal, projectUid).id, segmentId });
    return { entity: segmentView(entity, principal) };
  }

  @Patch(':segmentId')
  @ApiOperation({ summary: 'Change a segment', description: 'Only the fields sent change (`description: null` clears it); a new filter is checked against the catalogue. Needs PROJECT_AUDIENCE_WRITE.' })
  @ApiParam({ name: 'segmentId', description: 'segment id' })
  @ApiSuccess(200, SegmentReadSchema, 'the segment as changed')
  @ApiError(400, BAD_BODY)
  @ApiErrors(401, 403, 404, 429)
  async update(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @Param('segmentId') segmentId: string, @Body({ schema: UpdateSegmentBody }) body: unknown) {
    const { entity } = await this.updateSegment.execute({ projectId: projectOf(principal, projectUid).id, segmentId, ...parseInput(UpdateSegmentBody, body) });
    return { entity: segmentView(entity, principal) };
  }

  @Delete(':segmentId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a segment', description: 'Needs PROJECT_AUDIENCE_WRITE.' })
  @ApiParam({ name: 'segmentId', description: 'segment id' })
  @ApiSuccess(204, null, 'deleted')
  @ApiErrors(401, 403, 404, 429)
  async remove(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @Param('segmentId') segmentId: string): Promise<void> {
    await this.deleteSegment.execute({ projectId: projectOf(principal, projectUid).id, segmentId });
  }

  @Get(':segmentId/count')
  @ApiOperation({
    summary: "Count a segment's audience",
    description:
      "Exact, live count of the current audience contacts matching the segment's filter: the audience count (`POST …/audience/count`) of the stored filter, with the same compliance rules and the same need of `dataPolicy.mayReadPii` for conditions on email or phone. Needs PROJECT_AUDIENCE_READ.",
  })
  @ApiParam({ name: 'segmentId', description: 'segment id' })
  @ApiQuery({ name: 'filterCompliance', required: false, description: 'JSON object, URL-encoded, as in the audience count body: channel (`sms`, `email`, `rcs`, `whatsapp`) → `basic`, `opt-in` or `opt-out`' })
  @ApiSuccess(200, AudienceCountSchema, 'the count')
  @ApiError(400, '`filterCompliance` is not JSON, is given more than once or names a bad channel or mode, or another query parameter is given (`details.parameter` names it)')
  @ApiError(403, 'the token lacks PROJECT_AUDIENCE_READ, or the filter names an email or phone attribute without `dataPolicy.mayReadPii` (`details.path`)')
  @ApiError(409, "the segment's filter no longer fits the project catalogue (an attribute or event type was removed); `details.path` names the node")
  @ApiErrors(401, 404, 429)
  @ApiStoreReadLimits()
  count(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string, @Param('segmentId') segmentId: string, @Query() query: Record<string, unknown> = {}) {
    return this.countSegment.execute({ principal, projectId: projectOf(principal, projectUid).id, segmentId, query });
  }
}
