import { CurrentPrincipal, type Principal, projectOf } from '@meld/auth';
import { ApiPostgresUnavailable, ApiErrors, ApiOperation, ApiParam, ApiSuccess, ApiTags, PUBLIC_ROUTE_ERRORS } from '@meld/api';
import { Controller, Get, Param } from '@nestjs/common';
import { ProjectReadSchema } from './project-read.schema';
import { GetProject } from './usecases/get-project/get-project.usecase';

@ApiTags('project')
@ApiPostgresUnavailable()
@Controller('v1/project/:project')
export class ProjectController {
  constructor(private readonly getProject: GetProject) {}

  @Get()
  @ApiOperation({ summary: 'Read a project', description: 'The Project with its configuration, the unique attributes that merge contacts, the organization summary and the granted scopes.' })
  @ApiParam({ name: 'project', description: 'project UID' })
  @ApiSuccess(200, ProjectReadSchema, 'the project')
  @ApiErrors(...PUBLIC_ROUTE_ERRORS)
  read(@CurrentPrincipal() principal: Principal, @Param('project') projectUid: string) {
    const project = projectOf(principal, projectUid);
    return this.getProject.execute({ organizationId: project.organizationId, projectId: project.id, scopes: principal.scopes });
  }
}
