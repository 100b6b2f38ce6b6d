/**
 * Stops the given things (consumer runners, producers) on SIGTERM/SIGINT, in order, once.
 * Kubernetes sends SIGTERM and waits terminationGracePeriodSeconds: finishing the batch in
 * progress and committing it there means the next pod does not redo it.
 *
 * With a handler installed Node no longer exits on the signal by itself; the process ends
 * when the stopped clients release the event loop, or with `exit: true` right after.
 * Returns a function that removes the handlers.
 */
export function stopOnSignals(
  targets: ReadonlyArray<{ stop?: () => Promise<void>; disconnect?: () => Promise<void> }>,
  options: { signals?: NodeJS.Signals[]; exit?: boolean; onError?: (err: unknown) => void } = {},
): () => void {
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  let done = false;
  const handler = (): void => {
    if (done) return;
    done = true;
    void (async () => {
      let failed = false;
      for (const t of targets) {
        try {
          if (t.stop) await t.stop();
          else if (t.disconnect) await t.disconnect();
        } catch (err) {
          failed = true;
          options.onError?.(err);
        }
      }
      if (options.exit) process.exit(failed ? 1 : 0);
    })();
  };
  for (const s of signals) process.on(s, handler);
  return () => {
    for (const s of signals) process.removeListener(s, handler);
  };
}
