import { Injectable, NotFoundException } from '@nestjs/common';
import { channelReport, projectReport, type ReadinessReport } from '../../readiness-rules';
import { ReadinessRepository } from '../../readiness.repository';
import type { GetReadinessCommand } from './get-readiness.command';

/** A readiness report, recomputed from one snapshot on every call (never cached). */
@Injectable()
export class GetReadiness {
  constructor(private readonly readiness: ReadinessRepository) {}

  async execute({ organizationId, projectId, channel }: GetReadinessCommand): Promise<{ entity: ReadinessReport }> {
    const snapshot = await this.readiness.snapshot(organizationId, projectId, channel);
    if (!snapshot) throw new NotFoundException('project not found');
    return { entity: channel ? channelReport(channel, snapshot) : projectReport(snapshot) };
  }
}
