import { readFileSync, readdirSync } from 'node:fs';
import { getPriority } from 'node:os';
import { lowerCpuPriority } from './cpu-priority';

/** The nice value of one thread, from /proc (field 19 of stat, after the command's parentheses). */
function niceOf(tid: string): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

describe('lowerCpuPriority', () => {
  it('does nothing for 0', () => {
    expect(lowerCpuPriority(0)).toBe(0);
  });

  it('sets every thread of the process, and threads started later inherit it', async () => {
    // Runs in a child so the Jest worker keeps its own priority (nice cannot be raised back).
    const { execFileSync } = await import('node:child_process');
    const script = `
      const { lowerCpuPriority } = require(${JSON.stringify(require.resolve('./cpu-priority.ts'))});
      const set = lowerCpuPriority(7);
      const { Worker } = require('node:worker_threads');
      const w = new Worker('setInterval(() => {}, 1000)', { eval: true });
      w.on('online', () => {
        const fs = require('node:fs');
        const nices = fs.readdirSync('/proc/self/task').map((t) => {
          const s = fs.readFileSync('/proc/self/task/' + t + '/stat', 'utf8');
          return Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[16]);
        });
        process.stdout.write(JSON.stringify({ set, nices, main: require('node:os').getPriority() }));
        process.exit(0);
      });`;
    const out = JSON.parse(execFileSync(process.execPath, ['-r', '@swc-node/register', '-e', script], { encoding: 'utf8' })) as { set: number; nices: number[]; main: number };
    expect(out.set).toBeGreaterThan(1);
    expect(out.main).toBe(7);
    expect(out.nices.length).toBeGreaterThan(out.set);
    expect(new Set(out.nices)).toEqual(new Set([7]));
  });

  it('leaves the calling process alone when asked for nothing', () => {
    const before = readdirSync('/proc/self/task').map(niceOf);
    lowerCpuPriority(-5);
    expect(readdirSync('/proc/self/task').map(niceOf)).toEqual(before);
    expect(getPriority()).toBe(before[0]);
  });
});
