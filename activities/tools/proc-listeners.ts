/**
 * The TCP ports a set of processes and all their descendants listen on, read from Linux's
 * /proc: each process's open descriptors name socket inodes (/proc/<pid>/fd → socket:[N]),
 * and /proc/net/tcp{,6} maps listening sockets' inodes to ports. Nothing has to register: a
 * port the worker (or a program it started) opens tomorrow is found the same way.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** True where /proc describes processes and sockets (Linux). */
const HAS_PROC_NET = existsSync('/proc/self/fd') && existsSync('/proc/net/tcp');

const LISTEN = '0A';

/** Listening socket inode → port, from one /proc/net table (missing tables, e.g. no IPv6, are empty). */
function listeningSockets(table: string, into: Map<string, number>): void {
  let text: string;
  try {
    text = readFileSync(table, 'utf8');
  } catch {
    return;
  }
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
    if (f.length < 10 || f[3] !== LISTEN) continue;
    const port = parseInt(f[1]!.split(':')[1]!, 16);
    if (f[9] !== '0' && Number.isInteger(port)) into.set(f[9]!, port);
  }
}

/** pid → [parent pid, command name] of every process we may look at. */
function processTable(): Map<number, [number, string]> {
  const table = new Map<number, [number, string]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (comm) state ppid …": comm may hold spaces and parentheses, so split at the last ')'.
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const ppid = Number(stat.slice(close + 2).split(' ')[1]);
      table.set(Number(entry), [ppid, comm]);
    } catch {
      // gone meanwhile
    }
  }
  return table;
}

/** The roots and every process below them, with their command names. */
function processTree(roots: readonly number[]): Map<number, string> {
  const table = processTable();
  const children = new Map<number, number[]>();
  for (const [pid, [ppid]] of table) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const tree = new Map<number, string>();
  const queue = roots.filter((pid) => table.has(pid));
  while (queue.length) {
    const pid = queue.shift()!;
    if (tree.has(pid)) continue;
    tree.set(pid, table.get(pid)?.[1] ?? '?');
    queue.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/** Socket inodes among a process's open descriptors (none when we may not look). */
function socketInodes(pid: number): string[] {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) out.push(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

/** What one read of /proc found. */
export interface ListenerSnapshot {
  /** Every TCP port something on this machine (in our network namespace) listens on. */
  listening: Set<number>;
  /** Port → "<command> process (pid N)" for the ports the roots or their descendants listen on. */
  own: Map<number, string>;
}

/** The listening ports of the roots and all their descendants (any address, IPv4 or IPv6); undefined without /proc. */
export function processTreeListeners(roots: readonly number[]): ListenerSnapshot | undefined {
  if (!HAS_PROC_NET) return undefined;
  const sockets = new Map<string, number>();
  listeningSockets('/proc/net/tcp', sockets);
  listeningSockets('/proc/net/tcp6', sockets);
  const own = new Map<number, string>();
  if (sockets.size > 0) {
    for (const [pid, comm] of processTree(roots)) {
      for (const inode of socketInodes(pid)) {
        const port = sockets.get(inode);
        if (port !== undefined && !own.has(port)) own.set(port, `${comm} process (pid ${pid})`);
      }
    }
  }
  return { listening: new Set(sockets.values()), own };
}
