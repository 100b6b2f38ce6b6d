/** One item's outcome in a batch: its value, or the error that item alone gets. */
export type BatchOutcome<O> = { ok: true; value: O } | { ok: false; error: unknown };

export interface MicroBatcherOptions<I, O> {
  /** Runs one batch; answers one outcome per item, in the items' order. */
  run(items: readonly I[]): Promise<ReadonlyArray<BatchOutcome<O>>>;
  /** Items per batch at most. */
  maxBatch: number;
  /** Batches running at once at most; an item arriving while all run waits for the next batch. */
  maxInFlight: number;
}

interface Waiting<I, O> {
  item: I;
  resolve(value: O): void;
  reject(error: unknown): void;
}

/**
 * Group commit (ADR 0202): an item is run at once when a slot is free, else it joins the
 * items that arrive while the running batches work, and they go together as the next batch.
 * Under light load a batch is one item and adds no wait; under load batches grow by
 * themselves, with no timer. A batch that throws as a whole is run again item by item, so
 * one bad item fails alone.
 */
export class MicroBatcher<I, O> {
  private readonly queue: Array<Waiting<I, O>> = [];
  private inFlight = 0;

  constructor(private readonly options: MicroBatcherOptions<I, O>) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.drain();
    });
  }

  private drain(): void {
    while (this.inFlight < this.options.maxInFlight && this.queue.length) {
      const batch = this.queue.splice(0, this.options.maxBatch);
      this.inFlight++;
      void this.runBatch(batch).finally(() => {
        this.inFlight--;
        this.drain();
      });
    }
  }

  private async runBatch(batch: Array<Waiting<I, O>>): Promise<void> {
    let outcomes: ReadonlyArray<BatchOutcome<O>>;
    try {
      outcomes = await this.options.run(batch.map((w) => w.item));
    } catch (error) {
      if (batch.length === 1) return batch[0]!.reject(error);
      await Promise.all(batch.map((w) => this.runBatch([w])));
      return;
    }
    batch.forEach((w, i) => {
      const outcome = outcomes[i];
      if (!outcome) w.reject(new Error('batch answered fewer outcomes than items'));
      else if (outcome.ok) w.resolve(outcome.value);
      else w.reject(outcome.error);
    });
  }
}

export const ok = <O>(value: O): BatchOutcome<O> => ({ ok: true, value });
export const failed = <O>(error: unknown): BatchOutcome<O> => ({ ok: false, error });
