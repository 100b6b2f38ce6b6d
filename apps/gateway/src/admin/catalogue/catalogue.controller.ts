import { ApiPostgresUnavailable, ApiTags, AttributeSpecSchema, envelope } from '@meld/api';
import { Controller, Param, Post, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { AdminOperation } from '../http/admin-docs';
import { AdminTokenGuard } from '../http/admin-token.guard';
import { JsonBody } from '../http/json-body';
import { CreateAttributeBody, type CreateAttributeCommand } from './usecases/create-attribute/create-attribute.command';
import { CreateAttribute } from './usecases/create-attribute/create-attribute.usecase';
import { CreateEventTypeBody, type CreateEventTypeCommand } from './usecases/create-event-type/create-event-type.command';
import { AdminEventTypeSchema, CreateEventType } from './usecases/create-event-type/create-event-type.usecase';

const ProjectRef = z.object({ project: z.string() });

@ApiTags('admin')
@UseGuards(AdminTokenGuard)
@ApiPostgresUnavailable()
@Controller('admin/v1/projects/:project')
export class CatalogueController {
  constructor(
    private readonly createEventType: CreateEventType,
    private readonly createAttribute: CreateAttribute,
  ) {}

  @Post('event-types')
  @AdminOperation('Declare an event type and its parameters', 201, envelope(AdminEventTypeSchema, ProjectRef), [400, 404, 409])
  eventType(@Param('project') projectUid: string, @JsonBody(CreateEventTypeBody) body: Omit<CreateEventTypeCommand, 'projectUid'>) {
    return this.createEventType.execute({ ...body, projectUid });
  }

  @Post('attributes')
  @AdminOperation('Add a custom attribute to the catalogue', 201, envelope(AttributeSpecSchema, ProjectRef), [400, 404, 409])
  attribute(@Param('project') projectUid: string, @JsonBody(CreateAttributeBody) body: Omit<CreateAttributeCommand, 'projectUid'>) {
    return this.createAttribute.execute({ ...body, projectUid });
  }
}
