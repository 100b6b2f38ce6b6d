import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A process whose memory the bench reports. */
export interface WatchedProcess {
  name: string;
  pid: number;
}

export interface Memory {
  /** Resident set now, kB (VmRSS). */
  rssKb: number;
  /** Peak resident set over the process's life, kB (VmHWM). */
  hwmKb: number;
}

/** VmRSS / VmHWM from /proc/<pid>/status; undefined when the process is gone. */
export function readMemory(pid: number): Memory | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(text)?.[1] ?? Number.NaN);
  return { rssKb: field('VmRSS'), hwmKb: field('VmHWM') };
}

/**
 * The bench process itself, the apps `meld start` recorded in .stack/apps.json
 * ([{name,pid,port}]) and the Kafka broker of .stack/pids/kafka.pid, when present and alive.
 */
export function watchedProcesses(root: string, extra: WatchedProcess[] = [], options: { stackKafka?: boolean } = {}): WatchedProcess[] {
  const out: WatchedProcess[] = [{ name: 'bench', pid: process.pid }];
  const appsFile = join(root, '.stack/apps.json');
  if (existsSync(appsFile)) {
    try {
      const apps = JSON.parse(readFileSync(appsFile, 'utf8')) as Array<{ name: string; pid: number }>;
      for (const a of apps) if (Number.isInteger(a.pid)) out.push({ name: a.name, pid: a.pid });
    } catch {
      // A half-written apps.json (meld start in progress) only means fewer rows.
    }
  }
  const kafkaPid = join(root, '.stack/pids/kafka.pid');
  // Only when the scenario talks to the stack's broker: another broker's memory would mislead.
  if (options.stackKafka !== false && existsSync(kafkaPid)) {
    const pid = Number(readFileSync(kafkaPid, 'utf8').trim());
    if (Number.isInteger(pid)) out.push({ name: 'kafka', pid });
  }
  for (const e of extra) if (!out.some((p) => p.pid === e.pid || p.name === e.name)) out.push(e);
  return out.filter((p) => readMemory(p.pid) !== undefined);
}

/**
 * Samples VmRSS of the watched processes while a measurement runs, so each variant gets the
 * peak of its own run (VmHWM alone is a lifetime peak: the bench runs both variants in one
 * process, and the broker lives across runs).
 */
export class RssSampler {
  private readonly peaks = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly processes: readonly WatchedProcess[], private readonly intervalMs = 200) {}

  start(): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
    return this;
  }

  /** Stops sampling; peak VmRSS in MB by process name. */
  stop(): Record<string, number> {
    clearInterval(this.timer);
    this.sample();
    const out: Record<string, number> = {};
    for (const p of this.processes) out[p.name] = (this.peaks.get(p.pid) ?? Number.NaN) / 1024;
    return out;
  }

  private sample(): void {
    for (const p of this.processes) {
      const m = readMemory(p.pid);
      if (m) this.peaks.set(p.pid, Math.max(this.peaks.get(p.pid) ?? 0, m.rssKb));
    }
  }
}

/** The pid of a local stack service from .stack/pids/<service>.pid, when it runs. */
export function stackPid(root: string, service: string): number | undefined {
  const file = join(root, '.stack/pids', `${service}.pid`);
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').trim());
  return Number.isInteger(pid) && readMemory(pid) !== undefined ? pid : undefined;
}
