/**
 * Runs `work` over `items` with at most `limit` running at once, items started in order.
 * Workers stop picking new items once `shouldContinue` says no (stale batch, lost group
 * membership); what already started finishes. Rejects with the first error `work` throws
 * after every started item has settled, so nothing runs behind the caller's back.
 */
export async function runBounded<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
  shouldContinue: () => boolean = () => true,
): Promise<void> {
  let next = 0;
  let firstError: unknown;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (next < items.length && !failed && shouldContinue()) {
      const item = items[next++];
      try {
        await work(item);
      } catch (err) {
        if (!failed) {
          failed = true;
          firstError = err;
        }
      }
    }
  };
  const workers: Promise<void>[] = [];
  for (let i = 0; i < Math.min(Math.max(1, limit), items.length); i++) workers.push(worker());
  await Promise.all(workers);
  if (failed) throw firstError;
}
