/** What the merge knows of the source contact that sent an automation event. */
export interface SourceMembership {
  deleted: boolean;
  /** `source_contacts.version`: the contact's latest write. */
  version: bigint;
  /** Its audience contact, when the merge has placed it. */
  audienceId: string | null;
  /** The source version the merge last applied. */
  appliedVersion: bigint | null;
  /** Time since the contact's latest write (Postgres' clock on both ends). */
  sinceWriteMs: number;
}

export type TriggerDecision =
  | { kind: 'publish'; audienceId: string; /** the merge was still behind the contact's latest write */ stale: boolean }
  | { kind: 'wait'; reason: string }
  | { kind: 'dead-letter'; reason: string };

/**
 * Whether an automation event can be published as a trigger now. The event and the contact
 * write that created or changed its contact race (`_user_data` is upserted through the
 * outbox and merged by another consumer), so the trigger waits until the merge has applied
 * the contact's latest version: then its audience id reflects every write made before the
 * event. The merge gets `maxWaitMs` from that write (not from the first attempt: the bound
 * survives restarts, and a contact that has not been merged for long fails at once instead
 * of holding its partition); then the trigger goes out with the audience id the contact
 * has, if any. A contact the merge never placed, or one deleted meanwhile, is
 * dead-lettered with the reason (never dropped silently).
 */
export function decideTrigger(state: SourceMembership | null, maxWaitMs: number): TriggerDecision {
  if (!state) return { kind: 'dead-letter', reason: 'the source contact does not exist' };
  if (state.deleted) return { kind: 'dead-letter', reason: 'the source contact was deleted before its trigger was resolved' };
  const caughtUp = state.audienceId !== null && state.appliedVersion !== null && state.appliedVersion >= state.version;
  if (caughtUp) return { kind: 'publish', audienceId: state.audienceId!, stale: false };
  if (state.sinceWriteMs < maxWaitMs) {
    return { kind: 'wait', reason: state.audienceId ? `the merge applied version ${state.appliedVersion} of ${state.version}` : 'the source contact is not merged yet' };
  }
  if (state.audienceId) return { kind: 'publish', audienceId: state.audienceId, stale: true };
  return { kind: 'dead-letter', reason: `the source contact was not merged within ${maxWaitMs} ms of its latest write` };
}
