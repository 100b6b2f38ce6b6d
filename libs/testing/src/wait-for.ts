/** Polls until `probe` returns a truthy value; the error says what was awaited and the last value seen. */
export async function waitFor<T>(what: string, probe: () => Promise<T>, { timeoutMs = 15000, intervalMs = 100 } = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      last = await probe();
      if (last) return last as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
}
