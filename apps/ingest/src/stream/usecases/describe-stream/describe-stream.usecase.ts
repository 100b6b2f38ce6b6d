import { toDataSourceResource, toOrganizationSummary } from '@meld/api';
import { Injectable, NotFoundException } from '@nestjs/common';
import { StreamScope } from '../../stream-scope';
import { StreamRepository } from '../../stream.repository';
import type { DescribeStreamCommand } from './describe-stream.command';
import type { StreamDescription } from './describe-stream.schema';

/**
 * The cheapest credential probe: who the token writes for and how much of its quota is
 * left. Write counts join `usage` when ingest records them (ADR 0019).
 */
@Injectable()
export class DescribeStream {
  constructor(
    private readonly scope: StreamScope,
    private readonly streams: StreamRepository,
  ) {}

  async execute(command: DescribeStreamCommand): Promise<StreamDescription> {
    const dataSource = await this.scope.dataSource(command);
    const [project, organization] = await Promise.all([
      this.streams.findProject(command.organizationId, command.projectId),
      this.streams.findOrganization(command.organizationId),
    ]);
    if (!project || !organization) throw new NotFoundException('project not found');
    return {
      entity: {
        organization: toOrganizationSummary(organization, command.scopes.includes('ACCOUNT_READ')),
        project: { id: project.id, uid: project.uid, name: project.name, timezone: project.timezone },
        datasource: toDataSourceResource(dataSource),
        usage: { rateLimit: command.rateLimit },
      },
      metadata: { tokenKind: command.tokenKind, scopes: command.scopes },
    };
  }
}
