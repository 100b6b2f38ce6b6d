/** A state of an audience contact as a test writes it to `audience_snapshot` (ClickHouse migration 0006). */
export interface SnapshotState {
  project_id: string;
  audience_id: string;
  /** UInt64 as a string or a number. */
  version: string | number;
}

/**
 * The rows the probes audience sink writes to the collapsing snapshot (ADR 0223) for states that
 * arrive in this order, for tests that write `audience_snapshot` straight to ClickHouse (they
 * cannot import the sink, an app): a newer state writes a −1 copy of the previous one and a +1
 * of itself; an older or equal one writes nothing. It remembers what it returned instead of
 * reading the table back; the sink's own read-back and redelivery are tested in apps/probes.
 */
export class CollapsingHistory {
  private readonly stored = new Map<string, SnapshotState>();

  rows<T extends SnapshotState>(states: readonly T[]): Array<T & { sign: 1 | -1 }> {
    const out: Array<T & { sign: 1 | -1 }> = [];
    for (const state of states) {
      const key = `${state.project_id}\u0000${state.audience_id}`;
      const previous = this.stored.get(key) as T | undefined;
      if (previous && BigInt(previous.version) >= BigInt(state.version)) continue;
      if (previous) out.push({ ...previous, sign: -1 });
      out.push({ ...state, sign: 1 });
      this.stored.set(key, state);
    }
    return out;
  }
}
