/**
 * How one rule matches one tool call or one program of a shell command, and where paths lead.
 * Pure string work: the sandbox mounts the workspace at /workspace and runs commands there, so
 * paths are resolved against that, without touching any file system.
 */
import type { Risk } from '../types';
import type { Rule, RuleCondition } from './schema';
import type { SimpleCommand } from './shell';

/** A tool call as the policy sees it. */
export interface PolicyCall {
  tool: string;
  risk: Risk;
  args: Record<string, unknown>;
}

/** The workspace as mounted in the sandbox; relative paths resolve against it. */
export const WORKSPACE = '/workspace';
// Scratch space inside the sandbox (a tmpfs) is as harmless as the workspace.
const INSIDE = [WORKSPACE, '/tmp'];
// Device files that only produce or swallow bytes: reading or writing them reaches nothing.
const HARMLESS_DEVICES = /^\/dev\/(null|zero|random|urandom|stdin|stdout|stderr|fd\/\d+)$/;
// Where output redirections are not writing files (allow rules need no `redirect` for these).
const SINKS = /^\/dev\/(null|stdout|stderr|fd\/\d+)$/;
const HOME = /^(~|\$HOME\b|\$\{HOME\}|"\$HOME"|"\$\{HOME\}")/;
// Tool arguments that name files, for tools other than run_shell.
const PATH_ARG = /(^|_)(path|paths|file|files|filename|dir|directory|folder|cwd)$/i;

const regexCache = new Map<string, RegExp>();

/** A compiled rule pattern (cached: rules are matched on every call). */
export function re(source: string): RegExp {
  let compiled = regexCache.get(source);
  if (!compiled) {
    compiled = new RegExp(source);
    regexCache.set(source, compiled);
  }
  return compiled;
}

/** Whether a name matches a pattern where `*` stands for any characters. */
export function globMatch(pattern: string, name: string): boolean {
  if (!pattern.includes('*')) return pattern === name;
  return re(`^${pattern.split('*').map(escapeRegex).join('.*')}$`).test(name);
}

/** Escapes a string for use inside a regular expression. */
export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** Whether a path, taken relative to the workspace, ends up outside it (home paths always do). */
export function isOutsideWorkspace(path: string): boolean {
  if (HOME.test(path)) return true;
  const parts: string[] = [];
  for (const segment of (path.startsWith('/') ? path : `${WORKSPACE}/${path}`).split('/')) {
    if (segment === '..') parts.pop();
    else if (segment !== '' && segment !== '.') parts.push(segment);
  }
  const resolved = `/${parts.join('/')}`;
  if (HARMLESS_DEVICES.test(resolved)) return false;
  return !INSIDE.some((root) => resolved === root || resolved.startsWith(`${root}/`));
}

function pathLike(value: string): boolean {
  return value.startsWith('/') || HOME.test(value) || value.split('/').includes('..');
}

/** The paths of a program (arguments, `--opt=path` / `of=path` values, redirections) outside the workspace. */
export function outsidePaths(command: SimpleCommand): string[] {
  const candidates = command.args.flatMap((arg) => {
    const eq = arg.indexOf('=');
    return eq > 0 ? [arg, arg.slice(eq + 1)] : [arg];
  });
  const all = [...candidates, ...command.redirects, ...command.reads];
  return [...new Set(all.filter((p) => pathLike(p) && isOutsideWorkspace(p)))];
}

/** The file-naming arguments of a non-shell tool call that lie outside the workspace. */
export function outsideArgPaths(args: Record<string, unknown>): string[] {
  return Object.entries(args)
    .filter(([key]) => PATH_ARG.test(key))
    .flatMap(([, value]) => (Array.isArray(value) ? value : [value]))
    .filter((value): value is string => typeof value === 'string' && isOutsideWorkspace(value));
}

/** Whether the rule's tool, risk and argument patterns match the call. */
export function toolApplies(rule: Rule, call: PolicyCall): boolean {
  if (!globMatch(rule.tool, call.tool)) return false;
  const when = rule.when;
  if (when?.risk && !when.risk.includes(call.risk)) return false;
  for (const [name, pattern] of Object.entries(when?.args ?? {})) {
    const value = call.args[name];
    if (value === undefined) return false;
    if (!re(pattern).test(typeof value === 'string' ? value : JSON.stringify(value))) return false;
  }
  return true;
}

/** Whether the rule has conditions checked per program (so it says nothing about other tools). */
export function hasCommandConditions(when: RuleCondition | undefined): boolean {
  if (!when) return false;
  return ['command', 'commandPrefix', 'anyArg', 'noArg', 'redirect'].some((k) => when[k as keyof RuleCondition] !== undefined);
}

/**
 * Whether the rule's per-program conditions hold for one program. With `covering` (allow rules),
 * files written by redirection must each match `redirect`: allowing a program is not allowing it
 * to write files.
 */
export function commandMatches(when: RuleCondition, command: SimpleCommand, covering: boolean): boolean {
  if (when.command && !when.command.some((p) => globMatch(p, command.program))) return false;
  if (when.commandPrefix) {
    const argv = [command.program, ...command.args];
    if (!when.commandPrefix.split(/\s+/).every((word, i) => argv[i] === word)) return false;
  }
  if (when.anyArg && !command.args.some((a) => re(when.anyArg as string).test(a))) return false;
  if (when.noArg && command.args.some((a) => re(when.noArg as string).test(a))) return false;
  if (covering) {
    const files = command.redirects.filter((t) => !SINKS.test(t));
    if (files.some((t) => !(when.redirect && re(when.redirect).test(t)))) return false;
  } else if (when.redirect && !command.redirects.some((t) => re(when.redirect as string).test(t))) {
    return false;
  }
  if (when.outsideWorkspace !== undefined && outsidePaths(command).length > 0 !== when.outsideWorkspace) return false;
  return true;
}
