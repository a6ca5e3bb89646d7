/** CPU time of processes, from /proc, for benchmarks that report what a unit of work costs in CPU. */
import { readFileSync } from 'node:fs';

export const TICK_MS = 1000 / 100; // /proc clock ticks (USER_HZ is 100 on Linux)

/** One process as /proc tells it: its name, parent, start time, own CPU and its reaped children's (ms). */
export interface ProcStat {
  comm: string;
  ppid: number;
  start: string;
  self: number;
  children: number;
}

/** `/proc/<pid>/stat` read; undefined when the process is gone. */
export function procStat(pid: number | string): ProcStat | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const f = stat.slice(close + 2).split(' ');
    return {
      comm: stat.slice(stat.indexOf('(') + 1, close),
      ppid: Number(f[1]),
      start: f[19]!,
      self: (Number(f[11]) + Number(f[12])) * TICK_MS,
      children: (Number(f[13]) + Number(f[14])) * TICK_MS,
    };
  } catch {
    return undefined;
  }
}

/** User plus system CPU (ms) a process has used so far, its reaped children included; 0 when it is gone. */
export function processCpuMs(pid: number): number {
  const s = procStat(pid);
  return s ? s.self + s.children : 0;
}

/** This process's CPU (ms), all threads, at microsecond resolution. */
export function ownCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}
