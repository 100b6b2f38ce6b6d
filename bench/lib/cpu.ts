import { readFileSync } from 'node:fs';

/** CPU time (user + system) of this process, µs. Steadier than wall time on a shared box. */
export function selfCpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

const TICK_US = 1e6 / 100; // USER_HZ is 100 on Linux

/** CPU time of another process from /proc/<pid>/stat (utime + stime), µs; NaN when gone. */
export function processCpuUs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_US;
  } catch {
    return Number.NaN;
  }
}
