import { randomUUID } from 'node:crypto';
import { applyRestrictiveConsent } from '../../merge-consent';
import { applySuppression } from '../../merge-suppression';
import { contactRef, type CapEvent, type MergeOptions } from '../../merge-core';
import { planMerge } from '../../merge-step';
import { MergeRepository, type MergeStepStore, type ProjectMergeSettings } from '../../merge.repository';
import type { MergeContactsCommand } from './merge-contacts.command';
import { stepChanges } from './step-changes';

export interface MergeStepResult {
  /** False when the step found nothing to do (replay, stale message). */
  changed: boolean;
  messages: number;
  capEvents: CapEvent[];
}

export interface MergeContactsOptions {
  /** Overrides of the project's merge settings (cap, hot key limit, junk values). */
  cap?: number;
  hotKeyLimit?: number;
  junkValues?: readonly string[];
  /** Where cap events are reported (the app logs them). */
  onCap?: (projectId: string, event: CapEvent) => void;
}

const NOTHING: MergeStepResult = { changed: false, messages: 0, capEvents: [] };

/**
 * A merge step: any number of changed source contacts of one project merged in one transaction
 * holding the project's merge lock, so two writes bridging the same pair end in one audience
 * contact. Everything is re-read under the lock; a step that finds nothing changed writes
 * nothing (replays are no-ops). Its region is the union of the contacts' regions, closed under
 * shared keys like a one-contact step's, so merging it at once equals merging the contacts one
 * by one (up to which new contact counts as older). The rules live here, the statements in
 * MergeRepository (ADR 0226).
 */
export class MergeContacts {
  constructor(
    private readonly repository: MergeRepository,
    private readonly options: MergeContactsOptions = {},
  ) {}

  async execute(command: MergeContactsCommand): Promise<MergeStepResult> {
    const { projectId } = command;
    const named = [...new Set(command.contacts.map(contactRef))];
    if (!named.length) return NOTHING;
    return this.repository.inProjectStep(projectId, async (store) => {
      const project = await store.settings();
      if (!project) return NOTHING;
      // A contact deleted and written again before the merge saw the delete lost the life its
      // member row belongs to: a step applies that delete, a further one merges it as a new
      // contact, in the same transaction (ADR 0027).
      let total = NOTHING;
      for (let view = store, todo = named; ; view = view.next()) {
        const { result, reborn } = await this.step(view, project, todo, command);
        total = { changed: total.changed || result.changed, messages: total.messages + result.messages, capEvents: [...total.capEvents, ...result.capEvents] };
        if (!reborn.length) return total;
        todo = reborn;
      }
    });
  }

  /** One step over a view of the project's merge state; `reborn`: the contacts it saw deleted, to merge again as new ones. */
  private async step(store: MergeStepStore, project: ProjectMergeSettings, named: string[], command: MergeContactsCommand): Promise<{ result: MergeStepResult; reborn: string[] }> {
    const { projectId } = command;
    // A merge again (ADR 0331) looks at every named contact: its keys may differ at the same version.
    const changed = command.again ? named : await store.state.pending(named);
    if (!changed.length) return { result: NOTHING, reborn: [] };
    const options = this.mergeOptions(project);
    let plan = await planMerge(store.state, changed, project.sources, options, () => randomUUID());
    const reborn: string[] = [];
    for (let found = store.state.reborn(plan.refs); found.length; found = store.state.reborn(plan.refs)) {
      store.state.seeDeleted(found);
      reborn.push(...found);
      plan = await planMerge(store.state, [...new Set([...changed, ...reborn])], project.sources, options, () => randomUUID());
    }
    // Consent and suppression survivorship apply before anything is compared or written (ADRs 0048, 0361).
    applyRestrictiveConsent(plan.result.audiences, plan.contacts, project.sources);
    applySuppression(plan.result.audiences, plan.contacts, project.sources);
    for (const e of plan.result.capEvents) this.options.onCap?.(projectId, e);

    const at = command.now ? command.now.toISOString() : project.at;
    const stored = await store.storedAudiences([...new Set(plan.previous.values())]);
    const { writes, memberFirstAt, consent, messages } = stepChanges({ projectId, plan, stored, changed, at, firstAt: (ref) => store.state.stateOf(ref)?.firstAt ?? null });
    await store.writeMembers(plan, memberFirstAt);
    await store.upsertAudiences(writes, at);
    await store.recordConsentChanges(consent, at);
    await store.recordAbsorbed(plan.result.absorbed);
    await store.deleteAudiences(plan.result.removed);
    await store.enqueue(messages);
    return { result: { changed: messages.length > 0, messages: messages.length, capEvents: plan.result.capEvents }, reborn };
  }

  private mergeOptions(project: ProjectMergeSettings): MergeOptions {
    const linkSources = new Set([...project.sources.values()].filter((s) => s.links).map((s) => s.id));
    return { mergingAttributes: project.mergingAttributes, attributeTypes: project.attributeTypes, locale: project.locale, linkSources, cap: this.options.cap, hotKeyLimit: this.options.hotKeyLimit, junkValues: this.options.junkValues };
  }
}
