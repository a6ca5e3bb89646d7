/**
 * What programs run in turn: wrappers (`sudo`, `env`, `xargs`, `timeout` ...), shells with `-c`,
 * `eval`/`trap` code, `find -exec`. Knowledge of command lines, kept apart from the AST walk.
 */
import type { Arg } from './types';

/** What a program runs: another argv (with the `NAME=value` assignments it is given, for `env`
 * and `sudo`), shell code to parse, or something that cannot be seen. */
type Inner = { argv: Arg[]; via: string; settings?: string[] } | { code: Arg[]; via: string } | { opaque: string };

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'posh', 'yash']);

/** Programs that run another program named in their arguments: options that take a separate
 * value, options whose value is shell code, positional arguments before the program. */
interface Wrapper {
  valued?: string[];
  code?: string[];
  positional?: number;
  assignments?: boolean;
}
const WRAPPERS: Record<string, Wrapper> = {
  env: { valued: ['-u', '--unset', '-C', '--chdir'], code: ['-S', '--split-string'], assignments: true },
  sudo: {
    valued: ['-u', '--user', '-g', '--group', '-C', '--close-from', '-D', '--chdir', '-h', '--host', '-p', '--prompt',
      '-r', '--role', '-t', '--type', '-U', '--other-user', '-T', '--command-timeout', '-R', '--chroot'],
    assignments: true,
  },
  doas: { valued: ['-u', '-C'] },
  su: { valued: ['-g', '--group', '-s', '--shell', '-w'], code: ['-c', '--command'], positional: 1 },
  nice: { valued: ['-n', '--adjustment'] },
  nohup: {},
  setsid: {},
  unbuffer: {},
  busybox: {},
  exec: { valued: ['-a'] },
  builtin: {},
  command: {},
  time: { valued: ['-f', '--format', '-o', '--output'] },
  timeout: { valued: ['-s', '--signal', '-k', '--kill-after'], positional: 1 },
  xargs: {
    valued: ['-a', '--arg-file', '-d', '--delimiter', '-E', '-I', '-L', '--max-lines', '-n', '--max-args', '-P',
      '--max-procs', '-s', '--max-chars', '--process-slot-var'],
  },
  stdbuf: { valued: ['-i', '-o', '-e'] },
  ionice: { valued: ['-c', '--class', '-n', '--classdata', '-t'] },
  chroot: { valued: ['--userspec', '--groups'], positional: 1 },
  flock: { valued: ['-w', '--timeout', '-E', '--conflict-exit-code'], code: ['-c', '--command'], positional: 1 },
  taskset: { positional: 1 },
  strace: { valued: ['-o', '-e', '-p', '-s', '-u', '-E', '-P', '-a', '-b', '-I', '-O', '-S', '-X'] },
  ltrace: { valued: ['-o', '-e', '-p', '-s', '-u', '-a', '-n'] },
  watch: { valued: ['-n', '--interval', '-q', '--equexit'] },
};
const FIND_EXEC = new Set(['-exec', '-execdir', '-ok', '-okdir']);

/** What a program runs itself: wrapped programs, `-c` code, `find -exec` clauses. */
export function innerCommands(program: string, args: Arg[]): Inner[] {
  if (SHELLS.has(program)) return shellInner(program, args);
  if (program === 'eval') return args.length ? [{ code: args, via: 'eval' }] : [];
  if (program === 'source' || program === '.') {
    return [{ opaque: `\`${program}\` runs a script file the policy cannot read` }];
  }
  if (program === 'trap') {
    const [code] = args;
    return code && args.length > 1 && !code.value.startsWith('-') ? [{ code: [code], via: 'trap' }] : [];
  }
  if (program === 'find') return findExec(args);
  if (program === 'command' && args.some((a) => a.value === '-v' || a.value === '-V')) return [];
  const spec = WRAPPERS[program];
  if (!spec) return [];
  const inner = unwrap(program, spec, args);
  // watch hands its arguments to `sh -c`.
  return program === 'watch' ? inner.map((i) => ('argv' in i ? { code: i.argv, via: 'watch' } : i)) : inner;
}

function unwrap(program: string, spec: Wrapper, args: Arg[]): Inner[] {
  let positional = spec.positional ?? 0;
  let options = true;
  const settings: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const a = arg.value;
    if (options && a === '--') {
      options = false;
    } else if (options && a.startsWith('-') && a.length > 1) {
      const eq = a.indexOf('=');
      if (spec.code?.includes(a)) return args[i + 1] ? [{ code: [args[i + 1]], via: `${program} ${a}` }] : [];
      if (eq > 0 && spec.code?.includes(a.slice(0, eq))) {
        return [{ code: [{ ...arg, value: a.slice(eq + 1) }], via: `${program} ${a.slice(0, eq)}` }];
      }
      if (spec.valued?.includes(a)) i++;
    } else if (spec.assignments && /^[A-Za-z_][A-Za-z0-9_]*=/.test(a)) {
      settings.push(a);
    } else if (positional > 0) {
      positional--;
    } else {
      return [{ argv: args.slice(i), via: program, ...(settings.length ? { settings } : {}) }];
    }
  }
  return [];
}

function shellInner(program: string, args: Arg[]): Inner[] {
  let dashC = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i].value;
    if (/^[-+][oO]$/.test(a) || a === '--rcfile' || a === '--init-file') {
      i++;
    } else if (/^-[a-zA-Z]+$/.test(a)) {
      dashC ||= a.includes('c');
    } else if (!/^[-+]/.test(a)) {
      if (dashC) return [{ code: [args[i]], via: `${program} -c` }];
      return [{ opaque: `\`${program} ${a}\` runs a script file the policy cannot read` }];
    }
  }
  return [{ opaque: `\`${program}\` would read commands the policy cannot see (no -c string)` }];
}

function findExec(args: Arg[]): Inner[] {
  const out: Inner[] = [];
  for (let i = 0; i < args.length; i++) {
    if (!FIND_EXEC.has(args[i].value)) continue;
    const start = i + 1;
    while (i + 1 < args.length && args[i + 1].value !== ';' && args[i + 1].value !== '+') i++;
    out.push({ argv: args.slice(start, i + 1), via: `find ${args[start - 1].value}` });
  }
  return out;
}
