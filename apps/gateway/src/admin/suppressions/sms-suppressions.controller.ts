import { ApiParam, ApiPostgresUnavailable, ApiQuery, ApiTags, entityOnly, envelope } from '@meld/api';
import { Controller, Delete, Get, Param, Put, Query, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { AdminOperation } from '../http/admin-docs';
import { AdminTokenGuard } from '../http/admin-token.guard';
import { SmsSuppressionSchema, SmsSuppressions } from './sms-suppressions.usecase';

const PHONE = { name: 'phone', description: 'URL-encoded: E.164 (`%2B447400123498`), or national in the project locale' };

@ApiTags('admin')
@UseGuards(AdminTokenGuard)
@ApiPostgresUnavailable()
@ApiParam({ name: 'project', description: 'project uid' })
@Controller('admin/v1/projects/:project/suppressions/sms')
export class SmsSuppressionsController {
  constructor(private readonly suppressions: SmsSuppressions) {}

  @Get()
  @ApiQuery({ name: 'phone', required: false, description: 'only this number (read as the path phone is)' })
  @ApiQuery({ name: 'limit', required: false, description: '1–200, default 50' })
  @ApiQuery({ name: 'cursor', required: false, description: 'metadata.nextCursor of the previous page' })
  @AdminOperation(
    'List the SMS suppression list of the project, in phone order (ADR 0361)',
    200,
    envelope(z.array(SmsSuppressionSchema), z.object({ count: z.int(), nextCursor: z.string().nullable() })),
    [400, 404],
  )
  list(@Param('project') projectUid: string, @Query() query: Record<string, unknown>) {
    return this.suppressions.list(projectUid, query);
  }

  @Put(':phone')
  @ApiParam(PHONE)
  @AdminOperation(
    'Suppress a number (`manual`): direct SMS to it are refused (422 `suppressed`), and its contacts carry `_suppressed_sms: true`; a number already suppressed is kept as it is (`metadata.created` false)',
    200,
    envelope(SmsSuppressionSchema, z.object({ created: z.boolean() })),
    [400, 404],
  )
  add(@Param('project') projectUid: string, @Param('phone') phone: string) {
    return this.suppressions.add(projectUid, phone);
  }

  @Delete(':phone')
  @ApiParam(PHONE)
  @AdminOperation('Lift the suppression of a number, whatever its reason: `_suppressed_sms` is cleared on its contacts; 404 when it is not suppressed', 200, entityOnly(SmsSuppressionSchema), [400, 404])
  lift(@Param('project') projectUid: string, @Param('phone') phone: string) {
    return this.suppressions.lift(projectUid, phone);
  }
}
