/** A source contact of a project, as a merge step takes it. */
export interface BatchedContact {
  dataSourceId: string;
  userId: string;
}

export interface StepRunner<R> {
  /** One merge step for the contacts of a project (one transaction). */
  step(projectId: string, contacts: readonly BatchedContact[]): Promise<R>;
}

interface Waiter<R> {
  contact: BatchedContact;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

interface ProjectQueue<R> {
  waiting: Array<Waiter<R>>;
  running: boolean;
}

/**
 * Gathers the contacts that Kafka handlers submit concurrently into merge steps of many
 * contacts, per project (group commit): a project's contacts that arrive while its step runs
 * go into its next step, at most `maxContacts` per step, and the first step of an idle
 * project waits one event-loop turn, so a consumed batch (dispatched synchronously up to the
 * runner's concurrency) becomes one step. Steps of one project run one after another in this
 * process (they would queue on the project's merge lock anyway); projects run side by side.
 *
 * Each submit settles with its own outcome, so the Kafka runner keeps per-message retries and
 * dead letters: when a step of several contacts fails, each of them is merged again in a step
 * of its own, and only those that fail alone are rejected (a poison message fails by itself).
 */
export class StepBatcher<R> {
  private readonly queues = new Map<string, ProjectQueue<R>>();

  constructor(
    private readonly runner: StepRunner<R>,
    private readonly maxContacts: number,
    /** After each successful step: its size and duration in seconds (metrics, relay nudge). */
    private readonly onStep?: (projectId: string, contacts: number, result: R, seconds: number) => void,
  ) {}

  submit(projectId: string, contact: BatchedContact): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      let queue = this.queues.get(projectId);
      if (!queue) {
        queue = { waiting: [], running: false };
        this.queues.set(projectId, queue);
      }
      queue.waiting.push({ contact, resolve, reject });
      if (!queue.running) {
        queue.running = true;
        const q = queue;
        setImmediate(() => void this.drain(projectId, q));
      }
    });
  }

  /** Contacts waiting for a step (tests). */
  get pending(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.waiting.length;
    return n;
  }

  private async drain(projectId: string, queue: ProjectQueue<R>): Promise<void> {
    while (queue.waiting.length) {
      const batch = queue.waiting.splice(0, this.maxContacts);
      await this.run(projectId, batch);
    }
    queue.running = false;
    this.queues.delete(projectId);
  }

  private async timed(projectId: string, contacts: BatchedContact[]): Promise<R> {
    const started = process.hrtime.bigint();
    const result = await this.runner.step(projectId, contacts);
    this.onStep?.(projectId, contacts.length, result, Number(process.hrtime.bigint() - started) / 1e9);
    return result;
  }

  private async run(projectId: string, batch: Array<Waiter<R>>): Promise<void> {
    try {
      const result = await this.timed(projectId, batch.map((w) => w.contact));
      for (const w of batch) w.resolve(result);
      return;
    } catch (err) {
      if (batch.length === 1) {
        batch[0].reject(err);
        return;
      }
    }
    // Isolate the failure: every contact in a step of its own.
    for (const w of batch) {
      try {
        w.resolve(await this.timed(projectId, [w.contact]));
      } catch (err) {
        w.reject(err);
      }
    }
  }
}
