import { ApiPostgresUnavailable, ApiTags, ProjectSchema, envelope } from '@meld/api';
import { Controller, Get, Param, Patch, Post, Put, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { AdminOperation } from '../http/admin-docs';
import { AdminTokenGuard } from '../http/admin-token.guard';
import { JsonBody } from '../http/json-body';
import { AdminProjectSchema } from './admin-project.view';
import { CreateProjectBody, type CreateProjectCommand } from './usecases/create-project/create-project.command';
import { CreateProject } from './usecases/create-project/create-project.usecase';
import { GetProject } from './usecases/get-project/get-project.usecase';
import { ListProjects } from './usecases/list-projects/list-projects.usecase';
import { SetLegalProfileBody, type SetLegalProfileCommand } from './usecases/set-legal-profile/set-legal-profile.command';
import { LegalProfileSchema, SetLegalProfile } from './usecases/set-legal-profile/set-legal-profile.usecase';
import { UpdateProjectBody, type UpdateProjectCommand } from './usecases/update-project/update-project.command';
import { UpdateProject } from './usecases/update-project/update-project.usecase';

type Body<C, K extends keyof C> = Omit<C, K>;

@ApiTags('admin')
@UseGuards(AdminTokenGuard)
@ApiPostgresUnavailable()
@Controller('admin/v1')
export class ProjectsController {
  constructor(
    private readonly createProject: CreateProject,
    private readonly listProjects: ListProjects,
    private readonly getProject: GetProject,
    private readonly updateProject: UpdateProject,
    private readonly setLegalProfile: SetLegalProfile,
  ) {}

  @Post('organizations/:org/projects')
  @AdminOperation('Create a project (reserved attributes seeded, config defaults merged)', 201, AdminProjectSchema, [400, 404, 409])
  create(@Param('org') organizationId: string, @JsonBody(CreateProjectBody) body: Body<CreateProjectCommand, 'organizationId'>) {
    return this.createProject.execute({ ...body, organizationId });
  }

  @Get('organizations/:org/projects')
  @AdminOperation("List an organization's projects", 200, envelope(z.array(ProjectSchema), z.object({ count: z.int() })), [404])
  list(@Param('org') organizationId: string) {
    return this.listProjects.execute({ organizationId });
  }

  @Get('projects/:project')
  @AdminOperation('Read a project with its operator settings', 200, AdminProjectSchema, [404])
  get(@Param('project') projectUid: string) {
    return this.getProject.execute({ projectUid });
  }

  @Patch('projects/:project')
  @AdminOperation('Change any writable Project field or the merging attributes', 200, AdminProjectSchema, [400, 404])
  update(@Param('project') projectUid: string, @JsonBody(UpdateProjectBody) body: Body<UpdateProjectCommand, 'projectUid'>) {
    return this.updateProject.execute({ ...body, projectUid });
  }

  @Put('projects/:project/legal-profile')
  @AdminOperation('Set the legal profile status', 200, z.object({ entity: LegalProfileSchema }), [400, 404])
  legalProfile(@Param('project') projectUid: string, @JsonBody(SetLegalProfileBody) body: Body<SetLegalProfileCommand, 'projectUid'>) {
    return this.setLegalProfile.execute({ ...body, projectUid });
  }
}
