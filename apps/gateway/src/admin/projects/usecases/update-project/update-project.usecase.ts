import { TENANCY_CHANGED_CHANNEL } from '@meld/auth';
import { localeCountry } from '@meld/contracts';
import { CatalogueRepository } from '@meld/db';
import { Injectable } from '@nestjs/common';
import { fieldError } from '../../../http/field-error';
import { found } from '../../../shared/found';
import { TenancyEvents } from '../../../shared/tenancy-events';
import { adminProjectView } from '../../admin-project.view';
import { checkKeywords } from '../../keywords.rule';
import { checkMergingAttributes } from '../../merging-attributes.rule';
import { projectColumns } from '../../project-patch';
import { ProjectsRepository } from '../../projects.repository';
import type { UpdateProjectCommand } from './update-project.command';

@Injectable()
export class UpdateProject {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly catalogue: CatalogueRepository,
    private readonly events: TenancyEvents,
  ) {}

  async execute({ projectUid, mergingAttributes, ...fields }: UpdateProjectCommand) {
    const project = found(await this.projects.findByUid(projectUid), 'project', projectUid);
    const merging = mergingAttributes === undefined ? undefined : checkMergingAttributes(mergingAttributes, await this.catalogue.listAttributes(project.id));
    // Stored as Meld writes ids (the column is text): messaging's `default` sender and readiness compare it with `senders.id` as text.
    if (fields.defaultSmsSender) fields.defaultSmsSender = fields.defaultSmsSender.toLowerCase();
    if (fields.defaultSmsSender && !(await this.projects.hasSmsSender(project.id, fields.defaultSmsSender))) {
      throw fieldError('defaultSmsSender', `no SMS sender "${fields.defaultSmsSender}" in this project`);
    }
    // Merged over the row as it is when written (locked), not as read above: concurrent PATCHes keep each other's blocks.
    const updated = await this.projects.change(project.id, (current) => {
      const patch = projectColumns(fields, current);
      // Against the other list as stored now (locked), like the merge itself.
      checkKeywords(fields.generalConfig, patch.generalConfig);
      if (merging !== undefined) patch.mergingAttributes = merging;
      // Contacts merged under the old attributes are merged again under the new ones (ADR 0331).
      // So are they when the locale's country changes: it is the default country of every national
      // phone number, as a merge key and as the audience contact's E.164 mobile (ADRs 0024, 0327).
      const remerge =
        (merging !== undefined && !sameSet(merging, current.mergingAttributes)) || (patch.locale !== undefined && localeCountry(patch.locale) !== localeCountry(current.locale));
      return { patch, remerge };
    });
    // The gateways cache each project's data mode: tell them it changed.
    if (fields.dataMode !== undefined) await this.events.publish(TENANCY_CHANGED_CHANNEL, project.id);
    return adminProjectView(updated, await this.projects.remergeOf(project.id));
  }
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const set = new Set(b);
  return a.length === set.size && a.every((x) => set.has(x));
}
