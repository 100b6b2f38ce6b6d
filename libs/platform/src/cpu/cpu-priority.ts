import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * Lowers this process's CPU priority (nice), every thread of it. On Linux setpriority() on a
 * pid changes one thread only, and V8's GC helpers and libuv's pool already run when main.ts
 * starts, so each thread under /proc/self/task is set (threads started later inherit from the
 * main thread). Where there is no /proc (macOS) the main thread is the best we can do.
 *
 * Why: apps whose work is batch (the probes sinks: seconds of latency are fine) share a machine
 * with the request path on one box (`npm start`, the benches). A sink's burst of decoding and
 * its parallel scavenges take both cores for tens of ms, and a request waiting behind them
 * for a core at each of its hops misses its latency goal (ADR 0074).
 * On Kubernetes each pod has its own CPU share and this changes nothing that matters.
 */
export function lowerCpuPriority(nice: number): number {
  if (nice <= 0) return 0;
  let threads: string[];
  try {
    threads = readdirSync('/proc/self/task');
  } catch {
    threads = [String(process.pid)];
  }
  let set = 0;
  for (const tid of threads) {
    try {
      setPriority(Number(tid), nice);
      set++;
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return set;
}
