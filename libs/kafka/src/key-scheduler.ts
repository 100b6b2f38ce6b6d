/**
 * Runs work items in offset order such that items of one key never overlap and keep their
 * order, items of different keys overlap (at most `limit` keys with work in flight), and
 * synchronous work costs no more than a plain loop.
 *
 * PostHog's ingestion consumer groups a batch into per-key queues up front. Measured here,
 * building those groups (a Map entry and an array per key, for batches where most keys
 * appear once) cost more than the rest of the runner together, so this schedules as it
 * goes instead: an item runs at once unless its key still has asynchronous work in flight,
 * in which case it is chained behind that work. Only keys with work in flight are tracked.
 *
 * Work returns true when the item is finished, false when it stopped unfinished (the batch
 * was aborted): later items of that key must then not run, or they would overtake it.
 */
export class KeyScheduler<I> {
  /** Keys with asynchronous work in flight → the promise of their last chained item. */
  private readonly busy = new Map<unknown, Promise<boolean>>();
  /** Keys whose work stopped unfinished: nothing more of theirs may run in this batch. */
  private readonly stopped = new Set<unknown>();
  private waiter: (() => void) | undefined;
  private firstError: unknown;
  private hasFailed = false;

  constructor(
    private readonly limit: number,
    private readonly work: (item: I) => boolean | Promise<boolean>,
    /** The item's key; asked only when some key has work in flight or the item's work goes async. */
    private readonly keyOf: (item: I) => string | null,
    /** Asked before a chained item runs, after the wait: false once the batch was aborted. */
    private readonly canContinue: () => boolean = () => true,
  ) {}

  get failed(): boolean {
    return this.hasFailed;
  }

  /** Keys with work in flight (for tests and the concurrency bound). */
  get inFlight(): number {
    return this.busy.size;
  }

  /**
   * Runs or chains one item. Returns a promise only when `limit` keys are busy: the caller
   * awaits it before submitting more, which bounds memory and concurrency.
   */
  submit(item: I): void | Promise<void> {
    if (this.hasFailed) return;
    let key: unknown;
    if (this.busy.size > 0 || this.stopped.size > 0) {
      key = this.identity(item);
      if (this.stopped.has(key)) return;
      const tail = this.busy.get(key);
      if (tail) {
        this.track(key, tail.then((ok) => (ok && !this.hasFailed && this.canContinue() ? this.work(item) : false)));
        return;
      }
    }
    let result: boolean | Promise<boolean>;
    try {
      result = this.work(item);
    } catch (err) {
      this.fail(err);
      return;
    }
    if (result === true) return;
    if (result === false) {
      this.stopped.add(key ?? this.identity(item));
      return;
    }
    this.track(key ?? this.identity(item), result);
    if (this.busy.size >= this.limit) return new Promise<void>((resolve) => (this.waiter = resolve));
  }

  /** A keyless message has no order to keep beyond its partition: it gets an identity of its own. */
  private identity(item: I): unknown {
    return this.keyOf(item) ?? {};
  }

  /** Waits for all work in flight; rejects with the first error any work threw. */
  async drain(): Promise<void> {
    while (this.busy.size > 0) await Promise.all([...this.busy.values()]);
    if (this.hasFailed) throw this.firstError;
  }

  private track(key: unknown, work: Promise<boolean>): void {
    const settled = work.then(
      (ok) => {
        if (!ok) this.stopped.add(key);
        return ok;
      },
      (err: unknown) => {
        this.fail(err);
        this.stopped.add(key);
        return false;
      },
    );
    this.busy.set(key, settled);
    void settled.then(() => {
      // Only the key's last chained item frees the key.
      if (this.busy.get(key) !== settled) return;
      this.busy.delete(key);
      const wake = this.waiter;
      this.waiter = undefined;
      wake?.();
    });
  }

  private fail(err: unknown): void {
    if (!this.hasFailed) {
      this.hasFailed = true;
      this.firstError = err;
    }
    // Unblock a submitter waiting for capacity: it must stop, not wait forever.
    const wake = this.waiter;
    this.waiter = undefined;
    wake?.();
  }
}
