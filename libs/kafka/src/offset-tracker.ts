/**
 * Which offset of a batch may be committed. Lanes finish out of order, but Kafka commits a
 * single position per partition, so the committable position is the end of the longest
 * prefix of the batch whose messages are all done: committing past an unfinished message
 * would lose it on a restart.
 *
 * Amortised O(1) per completion (the cursor only moves forward), which matters at tens of
 * thousands of messages per second.
 */
export class OffsetTracker {
  private readonly done: Uint8Array;
  private cursor = 0;

  constructor(readonly size: number) {
    this.done = new Uint8Array(size);
  }

  complete(index: number): void {
    if (index < 0 || index >= this.size) throw new RangeError(`index ${index} outside batch of ${this.size}`);
    this.done[index] = 1;
    if (index !== this.cursor) return; // finished ahead of an unfinished one: the cursor waits
    do this.cursor++;
    while (this.cursor < this.size && this.done[this.cursor] === 1);
  }

  /** Messages at the start of the batch that are all done. */
  get contiguous(): number {
    return this.cursor;
  }

  /** Index of the last message that may be committed, or -1 when none. */
  get committableIndex(): number {
    return this.cursor - 1;
  }

  get allDone(): boolean {
    return this.cursor === this.size;
  }
}
