/**
 * The gateway's in-process limits count in fixed windows aligned to the clock (ADR 0123), so a
 * burst that straddles a window's end is counted in two windows and never reaches the limit.
 * A test that needs a burst inside one window waits here, when too little of the current
 * window is left, until the next one starts.
 */
export async function awayFromWindowEdge(windowMs: number, neededMs = 15_000): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < neededMs) await new Promise((r) => setTimeout(r, left + 50));
}
