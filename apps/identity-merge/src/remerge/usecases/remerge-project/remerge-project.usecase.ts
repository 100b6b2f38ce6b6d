import { Logger } from '@nestjs/common';
import { Counter } from 'prom-client';
import { metricsRegistry } from '@meld/platform';
import { MergeContactsCommand } from '../../../merge/usecases/merge-contacts/merge-contacts.command';
import type { MergeContacts } from '../../../merge/usecases/merge-contacts/merge-contacts.usecase';
import type { RemergeClaim, RemergeRepository } from '../../remerge.repository';

/** Source contacts per merge step of a re-merge: a region can be much larger than its contacts. */
export const REMERGE_STEP_CONTACTS = 200;
const LOG_EVERY = 10_000;

const contactsMerged =
  (metricsRegistry.getSingleMetric('meld_remerge_contacts_total') as Counter | undefined) ??
  new Counter({ name: 'meld_remerge_contacts_total', help: 'Source contacts merged again after a change of merging attributes', registers: [metricsRegistry] });

/**
 * Goes through one project's source contacts after its merging attributes changed (ADR 0331),
 * merging them again step by step: each step is an ordinary merge step (the project's merge lock,
 * its region closed under old and new keys), so contacts that now share a value merge and those
 * that no longer do split, and live writes interleave safely. Progress is saved after each step,
 * so a restart goes on from there; a newer change of the attributes makes this run stop (the
 * next claim starts the new request from the beginning).
 */
export class RemergeProject {
  private readonly logger = new Logger('RemergeProject');

  constructor(
    private readonly repository: RemergeRepository,
    private readonly merge: MergeContacts,
    private readonly stepContacts = REMERGE_STEP_CONTACTS,
  ) {}

  /** Works through the claimed request: 'done'; 'replaced' when a newer request took its place; 'stopped' at shutdown. */
  async execute(claim: RemergeClaim, shouldStop: () => boolean = () => false): Promise<'done' | 'replaced' | 'stopped'> {
    let { cursor, contactsDone: done } = claim;
    if (!cursor) this.logger.log(`project ${claim.projectId}: merging its contacts again under its new merging attributes`);
    for (;;) {
      if (shouldStop()) return 'stopped';
      const contacts = await this.repository.nextContacts(claim.projectId, cursor, this.stepContacts);
      if (!contacts.length) {
        await this.repository.finish(claim);
        this.logger.log(`project ${claim.projectId}: merged again, ${done} source contacts`);
        return 'done';
      }
      await this.merge.execute(MergeContactsCommand.again(claim.projectId, contacts));
      cursor = contacts[contacts.length - 1];
      if (!(await this.repository.advance(claim, cursor, contacts.length))) return 'replaced';
      contactsMerged.inc(contacts.length);
      if (Math.floor((done + contacts.length) / LOG_EVERY) > Math.floor(done / LOG_EVERY)) this.logger.log(`project ${claim.projectId}: ${done + contacts.length} source contacts merged again`);
      done += contacts.length;
    }
  }
}
