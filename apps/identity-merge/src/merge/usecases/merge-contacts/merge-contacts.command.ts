/** A source contact as the consumer names it. */
export interface ContactId {
  projectId: string;
  dataSourceId: string;
  userId: string;
}

/** The changed source contacts of one project to merge in one step (a consumer batch, or one contact). */
export class MergeContactsCommand {
  private constructor(
    readonly projectId: string,
    /** New contacts take their merge seq in this order. */
    readonly contacts: ReadonlyArray<{ dataSourceId: string; userId: string }>,
    /** The step's time (tests); otherwise Postgres' clock read under the lock (MergeStepStore.settings). */
    readonly now?: Date,
    /** Merge the contacts even at a version already applied: the project's merging attributes changed (ADR 0331). */
    readonly again = false,
  ) {}

  static create(projectId: string, contacts: ReadonlyArray<{ dataSourceId: string; userId: string }>, now?: Date): MergeContactsCommand {
    return new MergeContactsCommand(projectId, contacts, now);
  }

  /** Contacts merged again under the project's current merging attributes, whatever was applied before. */
  static again(projectId: string, contacts: ReadonlyArray<{ dataSourceId: string; userId: string }>, now?: Date): MergeContactsCommand {
    return new MergeContactsCommand(projectId, contacts, now, true);
  }

  /** One contact: a step of its own. */
  static forContact(contact: ContactId, now?: Date): MergeContactsCommand {
    return new MergeContactsCommand(contact.projectId, [contact], now);
  }
}
