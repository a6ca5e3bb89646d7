/**
 * How one rule matches one tool call or one program of a shell command, and where paths lead.
 * Pure string work: the sandbox mounts the workspace at /workspace and runs commands there, so
 * paths are resolved against that, without touching any file system.
 */
import type { Risk } from '../types';
import { SHELL_TOOL } from './defaults';
import { codeArgsExact, knowsProgram, notReadOnlyExact } from './programs';
import { JS_PATTERNS, RE2_PATTERNS, type Patterns } from './patterns';
import { codeArgs, hasInspector, notReadOnly } from './v2/options';
import type { Rule, RuleCondition } from './schema';
import type { SimpleCommand } from './types';


/** A tool call as the policy sees it. */
export interface PolicyCall {
  tool: string;
  risk: Risk;
  args: Record<string, unknown>;
}

/** What a semantics knows of programs' command lines (the `readOnly` condition). */
export interface ProgramKnowledge {
  /** Whether the program has a table (only such programs can be read-only). */
  knows(program: string): boolean;
  /** Why the invocation is not read-only, or undefined when it only reads. */
  notReadOnly(program: string, args: readonly string[], globs?: readonly string[]): string | undefined;
  /** The arguments that are patterns or code, never paths (`sed`'s script), by index. */
  codeArgs(program: string, args: readonly string[]): Set<number>;
}

/** How a policy version reads its rules: the pattern engine and the version's checks. */
export interface Semantics {
  version: 1 | 2 | 3;
  patterns: Patterns;
  programs: ProgramKnowledge;
}

// The knowledge version 2 and older decisions were taken with (frozen in ./v2).
const V2_PROGRAMS: ProgramKnowledge = { knows: hasInspector, notReadOnly: (p, a, g) => notReadOnly(p, [...a], g), codeArgs: (p, a) => codeArgs(p, [...a]) };
const EXACT_PROGRAMS: ProgramKnowledge = { knows: knowsProgram, notReadOnly: notReadOnlyExact, codeArgs: codeArgsExact };

/** Policies without a version: the rules and semantics sessions were recorded with. */
export const LEGACY: Semantics = { version: 1, patterns: JS_PATTERNS, programs: V2_PROGRAMS };
/** Version 2: RE2 patterns, stricter coverage, readable skills. */
export const V2: Semantics = { version: 2, patterns: RE2_PATTERNS, programs: V2_PROGRAMS };
/** Version 3, the exact analysis: allow only what is fully understood (every word literal, every
 * construct modelled, every option in the program's table); anything else asks with the reason. */
export const V3: Semantics = { version: 3, patterns: RE2_PATTERNS, programs: EXACT_PROGRAMS };

/** The command of a run_shell call, when it has one. */
export function shellCommand(call: PolicyCall): string | undefined {
  return call.tool === SHELL_TOOL && typeof call.args.command === 'string' ? call.args.command : undefined;
}

/** The workspace as mounted in the sandbox; relative paths resolve against it. */
const WORKSPACE = '/workspace';
/** Where skills are mounted read-only in the sandbox: reading there is fine (version 2). */
const SKILLS = '/skills';
// Scratch space inside the sandbox (a tmpfs) is as harmless as the workspace.
const INSIDE = [WORKSPACE, '/tmp'];
// Device files that only produce or swallow bytes: reading or writing them reaches nothing.
const HARMLESS_DEVICES = /^\/dev\/(null|zero|random|urandom|stdin|stdout|stderr|fd\/\d+)$/;
/** Where output redirections are not writing files (allow rules need no `redirect` for these;
 * version 2 does not show them to rules at all). */
export const SINKS = /^\/dev\/(null|stdout|stderr|fd\/\d+)$/;
const HOME = /^(~|\$HOME\b|\$\{HOME\}|"\$HOME"|"\$\{HOME\}")/;
// Tool arguments that name files, for tools other than run_shell.
const PATH_ARG = /(^|_)(path|paths|file|files|filename|dir|directory|folder|cwd)$/i;
// A short option with its value attached: `-f/etc/x`, `-T../x` (version 2 checks the value).
const ATTACHED = /^-[A-Za-z]+([/~.][\s\S]*)$/;

/** Whether a path, taken relative to the workspace, ends up outside it (home paths always do).
 * With `reading`, the read-only skills mount counts as inside: reading a skill's files is fine. */
export function isOutsideWorkspace(path: string, reading = false): boolean {
  if (HOME.test(path)) return true;
  const parts: string[] = [];
  for (const segment of (path.startsWith('/') ? path : `${WORKSPACE}/${path}`).split('/')) {
    if (segment === '..') parts.pop();
    else if (segment !== '' && segment !== '.') parts.push(segment);
  }
  const resolved = `/${parts.join('/')}`;
  if (HARMLESS_DEVICES.test(resolved)) return false;
  const inside = reading ? [...INSIDE, SKILLS] : INSIDE;
  return !inside.some((root) => resolved === root || resolved.startsWith(`${root}/`));
}

// `..` as a whole path segment.
const PARENT = /(^|\/)\.\.(\/|$)/;

function pathLike(value: string): boolean {
  return value.startsWith('/') || HOME.test(value) || PARENT.test(value);
}

/** The paths of a program (arguments, `--opt=path` / `of=path` values, redirections) outside the
 * workspace. Version 2 also checks values attached to short options (`-f/etc/x`), skips
 * arguments that are code (a sed script such as `/a/,/b/p`), and lets arguments and input
 * redirections read the skills mount; writes there stay outside. One pass without copies: a
 * wrapper chain hands each of its programs nearly the whole command line. */
export function outsidePaths(command: SimpleCommand, sem: Semantics = LEGACY): string[] {
  const v2 = sem.version >= 2;
  const code = v2 ? sem.programs.codeArgs(command.program, command.args) : undefined;
  const found = new Set<string>();
  const check = (p: string, reading: boolean) => {
    if (!found.has(p) && pathLike(p) && isOutsideWorkspace(p, reading && v2)) found.add(p);
  };
  command.args.forEach((arg, i) => {
    if (code?.has(i)) return;
    check(arg, true);
    const eq = arg.indexOf('=');
    if (eq > 0) check(arg.slice(eq + 1), true);
    if (v2 && arg.startsWith('-')) {
      const attached = ATTACHED.exec(arg)?.[1];
      if (attached !== undefined) check(attached, true);
    }
  });
  for (const t of command.redirects) check(t, false);
  for (const t of command.reads) check(t, true);
  return [...found];
}

/** The file-naming arguments of a non-shell tool call that lie outside the workspace. */
export function outsideArgPaths(args: Record<string, unknown>): string[] {
  return Object.entries(args)
    .filter(([key]) => PATH_ARG.test(key))
    .flatMap(([, value]) => (Array.isArray(value) ? value : [value]))
    .filter((value): value is string => typeof value === 'string' && isOutsideWorkspace(value));
}

/**
 * The lower-case host name of an http(s) URL, or undefined when the URL is anything but plain
 * (user info, escapes, odd characters, numbers that are not a dotted IPv4 address): then no
 * `host` condition holds, so an allow rule for a host never covers a URL that might reach
 * another one once a URL parser has normalised it.
 */
export function urlHost(url: string): string | undefined {
  const m = /^https?:\/\/([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]*)?([/?#]|$)/i.exec(url);
  if (!m) return undefined;
  const host = m[1]!.toLowerCase();
  const last = host.split('.').pop() ?? '';
  if (/^(0x[0-9a-f]*|[0-9]+)$/.test(last) && !/^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/.test(host)) {
    return undefined;
  }
  return host;
}

/** Whether the rule's tool, risk, argument patterns and hosts match the call. */
export function toolApplies(rule: Rule, call: PolicyCall, sem: Semantics = LEGACY): boolean {
  if (!sem.patterns.glob(rule.tool, call.tool)) return false;
  const when = rule.when;
  if (when?.risk && !when.risk.includes(call.risk)) return false;
  if (when?.commandIs !== undefined && call.args.command !== when.commandIs) return false;
  for (const [name, pattern] of Object.entries(when?.args ?? {})) {
    const value = call.args[name];
    if (value === undefined) return false;
    if (!sem.patterns.test(pattern, typeof value === 'string' ? value : JSON.stringify(value))) return false;
  }
  if (when?.host) {
    const host = typeof call.args.url === 'string' ? urlHost(call.args.url) : undefined;
    if (host === undefined || !when.host.some((p) => sem.patterns.glob(p.toLowerCase(), host))) return false;
  }
  return true;
}

// A rule's `command` list split once into exact names and `*` patterns: a command of thousands
// of programs is matched against every rule's list.
const NAME_LISTS = new WeakMap<readonly string[], { names: Set<string>; globs: string[] }>();

/** Whether one of the names (`*` wildcards allowed) is the program. */
function namesProgram(list: readonly string[], program: string, patterns: Patterns): boolean {
  let split = NAME_LISTS.get(list);
  if (!split) {
    split = { names: new Set(list.filter((p) => !p.includes('*'))), globs: list.filter((p) => p.includes('*')) };
    NAME_LISTS.set(list, split);
  }
  return split.names.has(program) || split.globs.some((p) => patterns.glob(p, program));
}

/** Whether the rule has conditions checked per program (so it says nothing about other tools). */
export function hasCommandConditions(when: RuleCondition | undefined): boolean {
  if (!when) return false;
  return ['command', 'commandPrefix', 'anyArg', 'noArg', 'redirect', 'readOnly'].some((k) => when[k as keyof RuleCondition] !== undefined);
}

/**
 * Whether the rule's per-program conditions hold for one program. With `covering` (allow rules),
 * files written by redirection must each match `redirect`: allowing a program is not allowing it
 * to write files.
 */
export function commandMatches(when: RuleCondition, command: SimpleCommand, covering: boolean, sem: Semantics = LEGACY): boolean {
  const { patterns } = sem;
  if (when.command && !namesProgram(when.command, command.program, patterns)) return false;
  if (when.commandPrefix) {
    const words = when.commandPrefix.split(/\s+/);
    if (!words.every((word, i) => (i === 0 ? command.program : command.args[i - 1]) === word)) return false;
  }
  if (when.anyArg && !command.args.some((a) => patterns.test(when.anyArg as string, a))) return false;
  if (when.noArg && command.args.some((a) => patterns.test(when.noArg as string, a))) return false;
  if (covering) {
    const files = command.redirects.filter((t) => !SINKS.test(t));
    if (files.some((t) => !(when.redirect && patterns.test(when.redirect, t)))) return false;
  } else if (when.redirect && !command.redirects.some((t) => patterns.test(when.redirect as string, t))) {
    return false;
  }
  if (when.readOnly !== undefined && (sem.programs.notReadOnly(command.program, command.args, command.globs) === undefined) !== when.readOnly) return false;
  if (when.outsideWorkspace !== undefined && outsidePaths(command, sem).length > 0 !== when.outsideWorkspace) return false;
  return true;
}
