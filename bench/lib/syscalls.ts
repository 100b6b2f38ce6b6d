import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Calls per system call name, over every thread of one process. */
export type SyscallCounts = Map<string, number>;

/**
 * Counts the system calls of running processes with `strace -c -f -p` between start and stop.
 * On a box where the peer of each socket runs on the same cores, a syscall is CPU the request
 * pays: the figure to compare when a hop should cost one read and one write (ADR 0257).
 * strace slows the traced processes: throughput and CPU of a traced run are not comparable.
 */
export class SyscallTracer {
  private readonly dir = mkdtempSync(join(tmpdir(), 'meld-strace-'));
  private readonly tracers: Array<{ name: string; child: ChildProcess; file: string }> = [];

  async start(processes: Array<{ name: string; pid: number }>): Promise<this> {
    for (const p of processes) {
      const file = join(this.dir, `${p.name}.txt`);
      const child = spawn('strace', ['-c', '-f', '-o', file, '-p', String(p.pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
      this.tracers.push({ name: p.name, child, file });
    }
    // strace reports "Process N attached" on stderr once per thread; give it time to attach them all.
    await new Promise((resolve) => setTimeout(resolve, 500));
    return this;
  }

  async stop(): Promise<Record<string, SyscallCounts>> {
    const out: Record<string, SyscallCounts> = {};
    for (const t of this.tracers) {
      const exited = new Promise((resolve) => t.child.once('exit', resolve));
      t.child.kill('SIGINT');
      await exited;
      out[t.name] = parseStraceSummary(readFileSync(t.file, 'utf8'));
    }
    rmSync(this.dir, { recursive: true, force: true });
    return out;
  }
}

/** The `calls` column of `strace -c`'s table, by syscall name (the total row left out). */
export function parseStraceSummary(text: string): SyscallCounts {
  const counts: SyscallCounts = new Map();
  for (const line of text.split('\n')) {
    const cols = line.trim().split(/\s+/);
    // % time, seconds, usecs/call, calls, [errors], syscall
    if (cols.length < 5 || !/^[\d.]+$/.test(cols[0]!) || !/^\d+$/.test(cols[3]!)) continue;
    const name = cols[cols.length - 1]!;
    if (name !== 'total') counts.set(name, Number(cols[3]));
  }
  return counts;
}
