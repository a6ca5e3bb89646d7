/**
 * Reads strace's output (`-f -y -s 65535`): every program a command execs and every system call
 * that creates, changes or deletes a file, with the paths involved and the result. Strings are
 * C-escaped by strace (`\"`, `\\`, `\n`, octal `\303`), fds carry their path (`3</workspace/x>`,
 * with `<` and `>` escaped inside), and calls of different pids interleave as `<unfinished ...>`
 * and `<... name resumed>` halves, which are joined back per pid.
 */

/** Calls that run a program. */
const EXEC_CALLS = ['execve', 'execveat'];

/** Where each write-like call names its paths: `p` a path argument, `d` a dirfd followed by a
 * path, `f` an fd; the index of each. open-like calls write only with writing flags. */
const WRITE_CALLS: Record<string, string> = {
  open: 'p', openat: 'dp', openat2: 'dp', creat: 'p',
  unlink: 'p', unlinkat: 'dp', rmdir: 'p', mkdir: 'p', mkdirat: 'dp', mknod: 'p', mknodat: 'dp',
  rename: 'pp', renameat: 'dpdp', renameat2: 'dpdp', link: 'pp', linkat: 'dpdp',
  symlink: '-p', symlinkat: '-dp',
  chmod: 'p', fchmod: 'f', fchmodat: 'dp', chown: 'p', fchown: 'f', lchown: 'p', fchownat: 'dp',
  truncate: 'p', ftruncate: 'f', fallocate: 'f',
  utime: 'p', utimes: 'p', futimesat: 'dp', utimensat: 'dp',
  setxattr: 'p', lsetxattr: 'p', fsetxattr: 'f', removexattr: 'p', lremovexattr: 'p', fremovexattr: 'f',
  bind: 'f',
};

/** The `-e trace=` list: every exec and every call that can create, change or delete a file.
 * (fchmodat2 is refused by Docker's default seccomp profile, and strace 6.1 has no name for it.) */
export const TRACED_SYSCALLS: readonly string[] = [...EXEC_CALLS, ...Object.keys(WRITE_CALLS)];

const WRITING_FLAGS = /\b(O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_TMPFILE)\b/;

export interface Exec {
  pid: number;
  path: string;
  argv: string[];
  ok: boolean;
  result: string;
}

export interface WriteCall {
  pid: number;
  syscall: string;
  /** Absolute when strace could tell (the dirfd's path), else as the program gave it. */
  paths: string[];
  ok: boolean;
  result: string;
}

export interface ParsedTrace {
  /** Execs after the command's own shell started (env's and that bash's execs are left out). */
  execs: Exec[];
  writes: WriteCall[];
  /** Lines that were neither a known call nor strace noise: a parser gap, shown in reports. */
  unparsed: string[];
}

/** Parses one command's trace. The first successful exec of bash is the command's shell: it
 * and everything before it (env -i looking bash up in PATH) are the tracer's own. */
export function parseStrace(text: string): ParsedTrace {
  const pending = new Map<number, string>();
  const execs: Exec[] = [];
  const writes: WriteCall[] = [];
  const unparsed: string[] = [];
  let shellStarted = false;
  for (const line of text.split('\n')) {
    const m = /^(\d+)\s+(.*)$/.exec(line);
    if (!m) {
      if (line.trim()) unparsed.push(line);
      continue;
    }
    const pid = Number(m[1]);
    let rest = m[2]!;
    if (rest.startsWith('+++') || rest.startsWith('---')) continue;
    // A call cut short: resumed later, or never (`<detached ...>` when its process was killed,
    // e.g. a coproc the driver ends; `???(` when strace did not even know which call it was).
    const cut = / <(unfinished|detached) \.\.\.>$/.exec(rest);
    if (cut) {
      const head = rest.slice(0, cut.index);
      if (!head.startsWith('???(')) pending.set(pid, head);
      continue;
    }
    // `???` when strace lost track of which call it was (the process was killed mid-call).
    const resumed = /^<\.\.\. ([a-z0-9_]+|\?\?\?) resumed>(.*)$/.exec(rest);
    if (resumed) {
      const head = pending.get(pid);
      pending.delete(pid);
      if (head === undefined) {
        if (resumed[1] !== '???') unparsed.push(line);
        continue;
      }
      rest = head + resumed[2]!;
    }
    // A call strace could not name and that never returned (`???() = ?`: the process was gone
    // mid-call). It is not one of the traced calls strace knows; anything it did to a file
    // shows in the snapshot.
    if (/^\?\?\?\(\)\s+= \?$/.test(rest)) continue;
    const call = parseCall(rest);
    if (!call) {
      unparsed.push(line);
      continue;
    }
    if (EXEC_CALLS.includes(call.name)) {
      const exec = toExec(pid, call);
      if (!shellStarted) {
        shellStarted = exec.ok && exec.path.endsWith('/bash');
        continue;
      }
      execs.push(exec);
    } else if (shellStarted && call.name in WRITE_CALLS) {
      const w = toWrite(pid, call);
      if (w) writes.push(w);
    }
  }
  // A call cut off by the kill at the time limit still was an attempt.
  for (const [pid, head] of pending) {
    const call = parseCall(`${head}) = ? <unfinished>`);
    if (!call || !shellStarted) continue;
    if (EXEC_CALLS.includes(call.name)) execs.push(toExec(pid, call));
    else if (call.name in WRITE_CALLS) {
      const w = toWrite(pid, call);
      if (w) writes.push(w);
    }
  }
  return { execs, writes, unparsed };
}

interface Call {
  name: string;
  args: string[];
  result: string;
}

/** `name(arg, arg, ...) = result`, split at top-level commas (strings, brackets and fd paths
 * may hold commas and parentheses). */
function parseCall(text: string): Call | undefined {
  const open = text.indexOf('(');
  if (open <= 0) return undefined;
  const name = text.slice(0, open);
  if (!/^[a-z0-9_]+$/.test(name)) return undefined;
  const args: string[] = [];
  let depth = 0;
  let start = open + 1;
  let i = open + 1;
  for (; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') i = skipString(text, i);
    else if (c === '<' && /[0-9A-Z]/.test(text[i - 1] ?? '')) i = text.indexOf('>', i) < 0 ? text.length : text.indexOf('>', i);
    else if (c === '(' || c === '[' || c === '{') depth++;
    else if ((c === ']' || c === '}') && depth > 0) depth--;
    else if (c === ')') {
      if (depth === 0) break;
      depth--;
    } else if (c === ',' && depth === 0) {
      args.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (i >= text.length) return undefined;
  const last = text.slice(start, i).trim();
  if (last || args.length) args.push(last);
  const result = /^\s*=\s*(.*)$/.exec(text.slice(i + 1));
  return result ? { name, args, result: result[1]! } : undefined;
}

/** The index just at the closing quote of the string opening at `i`. */
function skipString(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j;
  }
  return text.length;
}

/** Decodes strace's C escapes into the bytes they stand for, read as UTF-8. The trace is read
 * as latin1 (strace escapes every byte outside printable ASCII anyway), one char per byte. */
export function unescape(s: string): string {
  const bytes: number[] = [];
  const simple: Record<string, number> = { n: 10, t: 9, r: 13, v: 11, f: 12, a: 7, b: 8, e: 27, '"': 34, '\\': 92, "'": 39, '?': 63 };
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c !== '\\' || i + 1 >= s.length) {
      bytes.push(c.charCodeAt(0) & 0xff);
      continue;
    }
    const n = s[++i]!;
    const oct = /^[0-7]{1,3}/.exec(s.slice(i));
    const hex = n === 'x' ? /^[0-9a-fA-F]{1,2}/.exec(s.slice(i + 1)) : null;
    if (oct) {
      bytes.push(parseInt(oct[0], 8) & 0xff);
      i += oct[0].length - 1;
    } else if (hex) {
      bytes.push(parseInt(hex[0], 16));
      i += hex[0].length;
    } else bytes.push(simple[n] ?? n.charCodeAt(0));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** A quoted string argument (`"..."`, maybe followed by `...` when cut), or undefined (NULL). */
function str(arg: string | undefined): string | undefined {
  if (!arg?.startsWith('"')) return undefined;
  return unescape(arg.slice(1, skipString(arg, 0)));
}

/** The path strace shows after an fd (`3</x>`, `AT_FDCWD</workspace>`). */
function fdPath(arg: string | undefined): string | undefined {
  const m = /^[^<]*<(.*)>$/.exec(arg ?? '');
  return m ? unescape(m[1]!) : undefined;
}

function strings(arg: string | undefined): string[] {
  const out: string[] = [];
  const text = arg ?? '';
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '"') continue;
    const end = skipString(text, i);
    out.push(unescape(text.slice(i + 1, end)));
    i = end;
  }
  return out;
}

function ok(result: string): boolean {
  return !result.startsWith('-1') && !result.startsWith('?');
}

function toExec(pid: number, call: Call): Exec {
  const at = call.name === 'execveat';
  const given = str(call.args[at ? 1 : 0]) ?? '';
  const path = at && (given === '' || !given.startsWith('/')) ? joinPath(fdPath(call.args[0]), given) : given;
  return { pid, path, argv: strings(call.args[at ? 2 : 1]), ok: ok(call.result), result: call.result };
}

function toWrite(pid: number, call: Call): WriteCall | undefined {
  if (call.name === 'open' || call.name === 'openat' || call.name === 'openat2') {
    const flags = call.args[call.name === 'open' ? 1 : 2] ?? '';
    if (!WRITING_FLAGS.test(flags)) return undefined;
  }
  if (call.name === 'bind') {
    // Only a Unix socket bound to a path makes a file (`sun_path=@"…"` is abstract).
    const m = /sun_path="((?:[^"\\]|\\.)*)"/.exec(call.args[1] ?? '');
    if (!m) return undefined;
    return { pid, syscall: call.name, paths: [unescape(m[1]!)], ok: ok(call.result), result: call.result };
  }
  const layout = WRITE_CALLS[call.name]!;
  const paths: string[] = [];
  for (let i = 0; i < layout.length; i++) {
    const kind = layout[i];
    const arg = call.args[i];
    if (kind === 'f') paths.push(fdPath(arg) ?? arg ?? '');
    else if (kind === 'p') paths.push(str(arg) ?? '');
    else if (kind === 'd') {
      const rel = str(call.args[i + 1]);
      // utimensat(fd, NULL, …) changes the fd's own file.
      paths.push(rel === undefined ? (fdPath(arg) ?? '') : joinPath(fdPath(arg), rel));
      i++;
    }
  }
  return { pid, syscall: call.name, paths, ok: ok(call.result), result: call.result };
}

function joinPath(dir: string | undefined, rel: string): string {
  if (rel.startsWith('/') || dir === undefined) return rel;
  if (rel === '') return dir;
  return `${dir.replace(/\/$/, '')}/${rel}`;
}
