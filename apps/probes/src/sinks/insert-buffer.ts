/**
 * Collects rows from concurrent Kafka handlers into one ClickHouse insert. A handler's
 * promise resolves only once its row is stored (so the runner commits nothing unstored) and
 * rejects when the insert fails (the runner retries the message). A flush happens when
 * `maxRows` rows wait or `lingerMs` after the first row, i.e. once per consumed batch in
 * practice: the runner dispatches a batch's messages synchronously up to its concurrency.
 */
export class InsertBuffer<Row> {
  private rows: Row[] = [];
  private waiters: Array<{ resolve: () => void; reject: (err: unknown) => void }> = [];
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly write: (rows: Row[]) => Promise<void>,
    private readonly options: { maxRows: number; lingerMs: number },
  ) {}

  add(row: Row): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.rows.push(row);
      this.waiters.push({ resolve, reject });
      if (this.rows.length >= this.options.maxRows) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.options.lingerMs);
    });
  }

  /** Writes what waits now; later rows go to the next flush. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.rows.length) return;
    const rows = this.rows;
    const waiters = this.waiters;
    this.rows = [];
    this.waiters = [];
    this.write(rows).then(
      () => waiters.forEach((w) => w.resolve()),
      (err: unknown) => waiters.forEach((w) => w.reject(err)),
    );
  }
}
