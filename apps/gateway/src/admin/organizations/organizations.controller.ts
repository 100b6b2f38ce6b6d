import { ApiPostgresUnavailable, ApiTags, OrganizationSchema, entityOnly, envelope } from '@meld/api';
import { Controller, Get, Param, Patch, Post, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { AdminOperation } from '../http/admin-docs';
import { AdminTokenGuard } from '../http/admin-token.guard';
import { JsonBody } from '../http/json-body';
import { CreateOrganizationBody, type CreateOrganizationCommand } from './usecases/create-organization/create-organization.command';
import { CreateOrganization } from './usecases/create-organization/create-organization.usecase';
import { GetOrganization } from './usecases/get-organization/get-organization.usecase';
import { UpdateOrganizationBody, type UpdateOrganizationCommand } from './usecases/update-organization/update-organization.command';
import { UpdateOrganization } from './usecases/update-organization/update-organization.usecase';

const ProjectSummaries = z.object({ projects: z.array(z.object({ id: z.string(), uid: z.string(), name: z.string() })) });

@ApiTags('admin')
@UseGuards(AdminTokenGuard)
@ApiPostgresUnavailable()
@Controller('admin/v1/organizations')
export class OrganizationsController {
  constructor(
    private readonly createOrganization: CreateOrganization,
    private readonly getOrganization: GetOrganization,
    private readonly updateOrganization: UpdateOrganization,
  ) {}

  @Post()
  @AdminOperation('Create an organization', 201, entityOnly(OrganizationSchema), [400])
  create(@JsonBody(CreateOrganizationBody) body: CreateOrganizationCommand) {
    return this.createOrganization.execute(body);
  }

  @Get(':org')
  @AdminOperation('Read an organization and its projects', 200, envelope(OrganizationSchema, ProjectSummaries), [404])
  get(@Param('org') organizationId: string) {
    return this.getOrganization.execute({ organizationId });
  }

  @Patch(':org')
  @AdminOperation('Change plan, funds, data mode, name or the OAuth sensitive-scope allowance of an organization', 200, entityOnly(OrganizationSchema), [400, 404])
  update(@Param('org') organizationId: string, @JsonBody(UpdateOrganizationBody) body: Omit<UpdateOrganizationCommand, 'organizationId'>) {
    return this.updateOrganization.execute({ ...body, organizationId });
  }
}
