/** CPU time of processes, for benchmarks that report what a unit of work costs in CPU. */
import { readFileSync } from 'node:fs';

const TICK_MS = 1000 / 100; // /proc clock ticks (USER_HZ is 100 on Linux)

/** User plus system CPU (ms) a process has used so far, its reaped children included; 0 when it is gone. */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * TICK_MS;
  } catch {
    return 0;
  }
}

/** This process's CPU (ms), all threads, at microsecond resolution. */
export function ownCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}
