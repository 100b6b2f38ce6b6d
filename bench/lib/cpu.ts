import { readFileSync } from 'node:fs';

/** CPU time (user + system) of this process, µs. Steadier than wall time on a shared box. */
export function selfCpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

const TICK_US = 1e6 / 100; // USER_HZ is 100 on Linux

/** CPU time of another process from /proc/<pid>/stat (utime + stime), µs; NaN when gone. */
export function processCpuUs(pid: number): number {
  const { user, sys } = processCpuSplitUs(pid);
  return user + sys;
}

/** User and system (kernel) CPU time of another process, µs; NaN when gone. */
export function processCpuSplitUs(pid: number): { user: number; sys: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) * TICK_US, sys: Number(fields[12]) * TICK_US };
  } catch {
    return { user: Number.NaN, sys: Number.NaN };
  }
}

/**
 * A process (or a set of them) whose CPU a scenario charges to the operations it measures.
 * `pids` names processes that come and go: Postgres runs a backend per connection, and the
 * bench counts only the backends of its own database (other sessions share the server).
 */
export type MeteredProcess = { name: string; pid: number } | { name: string; pids: () => Promise<number[]> };

/** CPU time used by each process between start() and stop(), µs by name (NaN when it went away). */
export class CpuMeter {
  private readonly before = new Map<string, Map<number, number>>();

  constructor(private readonly processes: readonly MeteredProcess[]) {}

  private async read(p: MeteredProcess): Promise<Map<number, number>> {
    const pids = 'pid' in p ? [p.pid] : await p.pids();
    return new Map(pids.map((pid) => [pid, pid === process.pid ? selfCpuUs() : processCpuUs(pid)]));
  }

  async start(): Promise<this> {
    for (const p of this.processes) this.before.set(p.name, await this.read(p));
    return this;
  }

  /** A process that started meanwhile counts from zero; one that ended meanwhile is lost (NaN for a single pid). */
  async stop(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const p of this.processes) {
      const before = this.before.get(p.name) ?? new Map<number, number>();
      let used = 0;
      for (const [pid, cpu] of await this.read(p)) used += cpu - (before.get(pid) ?? 0);
      out[p.name] = used;
    }
    return out;
  }
}
