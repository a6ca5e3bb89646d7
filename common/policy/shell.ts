/**
 * Finds every program a `run_shell` command would run, so a denied program cannot hide inside
 * an allowed one (pipes, lists, groups, substitutions, `sh -c`, wrappers such as `sudo` or `xargs`).
 *
 * Parser: `unbash` (ISC, zero dependencies, pure TypeScript, no Node built-ins or globals, synchronous).
 * It parses Bash 5.3 into a typed AST with `$(...)`, backticks and `<(...)` parsed recursively, and
 * reports errors instead of throwing, which is what deterministic workflow code needs. Rejected:
 * `bash-parser` (unmaintained since 2017, requires `fs`, bundles babylon, fails on `<(...)` and `<<<`),
 * `shell-quote` (a tokenizer: no `$(...)`, backticks or nesting), `mvdan-sh` (1.5 MB GopherJS build,
 * deprecated, requires `util`), `sh-syntax` and `tree-sitter-bash` (WASM / native addon with an
 * asynchronous start: unusable in the workflow sandbox). unbash is ESM-only: webpack (the workflow
 * bundle) and vitest load it natively, and Node >= 20.19 can `require` it.
 * Which programs run other programs (`sudo`, `xargs`, `find -exec` ...) is in wrappers.ts.
 */
import { forEachChild, parse } from 'unbash';
import type { Assignment, Command, Redirection, SyntaxNode, Word, WordPart } from 'unbash';
import type { Arg, CommandAnalysis, SimpleCommand } from './types';
import { innerCommands } from './wrappers';

export type { Arg, CommandAnalysis, SimpleCommand } from './types';

interface Io {
  writes: string[];
  reads: string[];
}
interface Scope {
  src: string;
  depth: number;
  /** Scripts entered so far (the command itself, substitutions, `sh -c` code): bounds the recursion. */
  nesting: number;
  via?: string;
  io: Io;
}
interface Found {
  out: SimpleCommand[];
  problems: string[];
  settings: string[];
}

// `sh -c "$(printf ...)"` style nesting is legal but has no honest use beyond a few levels.
const MAX_DEPTH = 8;
// Substitutions inside substitutions (`$($($(…)))`): every level costs dozens of stack frames in
// the parser and this walk, and a stack overflow would fail the workflow task on every replay.
// Far below where the stack runs out, far above anything written by hand.
const MAX_NESTING = 32;
// Words quoted in reasons are cut: a reason is recorded in history with every decision.
const QUOTE_MAX = 80;
// Where the sandbox's own programs live: `/usr/bin/cat` is cat, `./cat` is whatever was written there.
const SYSTEM_PROGRAM = /^\/(usr\/)?s?bin\/[^/]+$/;

/** Parses a shell command and lists every program it would run, recursing into nested code. */
export function analyzeCommand(command: string): CommandAnalysis {
  const found: Found = { out: [], problems: [], settings: [] };
  analyzeSource(command, { src: command, depth: 0, nesting: 0, io: { writes: [], reads: [] } }, found);
  const [reason] = found.problems;
  const { out: commands, settings } = found;
  return reason === undefined ? { ok: true, commands, settings } : { ok: false, reason, commands, settings };
}

function analyzeSource(source: string, scope: Scope, found: Found): void {
  if (scope.depth > MAX_DEPTH) {
    found.problems.push('shell code is nested too deeply to analyse');
    return;
  }
  visit(parse(source), { ...scope, src: source }, found);
}

function visit(node: SyntaxNode, scope: Scope, found: Found): void {
  switch (node.type) {
    case 'Script': {
      if (scope.nesting >= MAX_NESTING) {
        found.problems.push('shell code is nested too deeply to analyse');
        return;
      }
      const where = scope.via ? ` in \`${scope.via}\` code` : '';
      for (const e of node.errors ?? []) found.problems.push(`${e.message} (at offset ${e.pos}${where})`);
      // A substitution's output goes to the outer command, not to the redirections around it.
      scope = { ...scope, nesting: scope.nesting + 1, src: node.source ?? scope.src, io: { writes: [], reads: [] } };
      break;
    }
    case 'Redirected': {
      const io = merge(scope.io, redirections(node.redirects, found));
      forEachChild(node, (child) => visit(child, child === node.command ? { ...scope, io } : scope, found));
      return;
    }
    case 'Command':
      simpleCommand(node, scope, found);
      break;
    // What changes how later programs run, though it runs none itself.
    case 'For':
    case 'Select':
      found.settings.push(`\`${node.type.toLowerCase()} ${cut(node.name.text)} in …\` assigns a variable`);
      break;
    case 'ArithmeticCommand':
    case 'ArithmeticFor':
      found.settings.push('an arithmetic command can assign variables');
      break;
    case 'Function':
      found.settings.push(`\`${cut(node.name.text)}() {…}\` defines a function`);
      break;
  }
  forEachChild(node, (child) => visit(child, scope, found));
}

function simpleCommand(node: Command, scope: Scope, found: Found): void {
  const io = merge(scope.io, redirections(node.redirects, found));
  for (const p of node.prefix) {
    if (p.type === 'Assignment') found.settings.push(`\`${cut(p.text)}\` assigns a variable`);
  }
  if (node.name) {
    runArgv([node.name, ...node.args].map(toArg), node.end, scope, io, found, scope.via);
  } else if (io.writes.length || io.reads.length) {
    const text = scope.src.slice(node.pos, node.end);
    found.out.push({ program: '', args: [], text, redirects: io.writes, reads: io.reads });
  }
}

/** Records argv[0] and follows it into whatever it runs in turn. */
function runArgv(argv: Arg[], end: number, scope: Scope, io: Io, found: Found, via?: string): void {
  const [head, ...args] = argv;
  if (!head) return;
  const program = head.literal ? head.value.slice(head.value.lastIndexOf('/') + 1) : head.value;
  const text = scope.src.slice(head.pos, end);
  const values = args.map((a) => a.value);
  const unknown = argv.filter((a) => a.unknown).map((a) => `\`${cut(a.value)}\` (${a.unknown})`);
  if (head.literal && head.value.includes('/') && !SYSTEM_PROGRAM.test(head.value)) {
    unknown.unshift(`\`${cut(head.value)}\` (a program file outside /bin and /usr/bin)`);
  }
  const globs = args.filter((a) => a.glob).map((a) => a.value);
  found.out.push({
    program, args: values, text, redirects: io.writes, reads: io.reads,
    ...(via ? { via } : {}),
    ...(unknown.length ? { unknown } : {}),
    ...(globs.length ? { globs } : {}),
  });
  if (!head.literal) {
    found.problems.push(`the program \`${head.value}\` is only known at run time`);
    return;
  }
  for (const inner of innerCommands(program, args)) {
    if ('opaque' in inner) found.problems.push(inner.opaque);
    else if ('argv' in inner) {
      for (const a of inner.settings ?? []) found.settings.push(`\`${cut(a)}\` (${inner.via}) assigns a variable`);
      const last = inner.argv[inner.argv.length - 1];
      runArgv(inner.argv, last ? last.end : end, scope, io, found, inner.via);
    } else if (inner.code.every((a) => a.literal)) {
      const code = inner.code.map((a) => a.value).join(' ');
      const nested: Scope = { src: code, depth: scope.depth + 1, nesting: scope.nesting, via: inner.via, io: { writes: [], reads: [] } };
      analyzeSource(code, nested, found);
    } else {
      found.problems.push(`\`${inner.via}\` runs shell code only known at run time`);
    }
  }
}

function redirections(list: readonly Redirection[], found: Found): Io {
  const io: Io = { writes: [], reads: [] };
  for (const r of list) {
    // Here-documents and here-strings feed text, not files.
    if (r.type !== 'Redirect' || !r.target) continue;
    const target = toArg(r.target);
    if ((r.operator === '>&' || r.operator === '<&') && /^(\d+|-)$/.test(target.value)) continue;
    if (!target.literal) found.problems.push(`the redirection target \`${target.value}\` is only known at run time`);
    if (r.operator !== '<' && r.operator !== '<&') io.writes.push(target.value);
    if (r.operator === '<' || r.operator === '<&' || r.operator === '<>') io.reads.push(target.value);
  }
  return io;
}

function merge(a: Io, b: Io): Io {
  return { writes: [...a.writes, ...b.writes], reads: [...a.reads, ...b.reads] };
}

function toArg(w: Word | Assignment): Arg {
  if (w.type === 'Assignment') {
    const unknown = w.value.type === 'Word' ? unknownIn(w.value) : 'an array value';
    const literal = w.value.type === 'Word' && isLiteral(w.value);
    return { value: w.text, literal, ...(unknown ? { unknown } : {}), pos: w.pos, end: w.end };
  }
  const parts = w.parts ?? [];
  // Globs and braces keep their pattern in `value`; real expansions fall back to the source text.
  const expands = !parts.every((p) => isQuoted(p) || p.type === 'Glob' || p.type === 'BraceExpansion' || p.type === 'ExtendedGlob');
  const unknown = unknownIn(w);
  const glob = parts.some((p) => p.type === 'Glob' || p.type === 'ExtendedGlob');
  return {
    value: expands ? w.text : w.value, literal: parts.every(isQuoted),
    ...(unknown ? { unknown } : {}), ...(glob ? { glob } : {}),
    pos: w.pos, end: w.end,
  };
}

/** Why a word's value is only known at run time, when that matters to an allow rule. */
function unknownIn(w: Word): string | undefined {
  let glob = false;
  for (const p of w.parts ?? []) {
    switch (p.type) {
      case 'DoubleQuoted':
      case 'LocaleString': {
        const inner = p.parts.find((c) => c.type !== 'Literal');
        if (inner) return expansionKind(inner.type);
        break;
      }
      case 'SimpleExpansion':
      case 'ParameterExpansion':
      case 'CommandExpansion':
      case 'ArithmeticExpansion':
        return expansionKind(p.type);
      case 'BraceExpansion':
        return 'brace expansion';
      case 'ExtendedGlob':
        return 'extended glob';
      case 'Glob':
        glob = true;
        break;
      // Literal and quoted text is what it says; a process substitution is a /dev/fd path whose
      // commands are analysed like any other.
    }
  }
  return glob && globMayLeave(w.value) ? 'a glob that can match outside the workspace' : undefined;
}

function expansionKind(type: string): string {
  if (type === 'CommandExpansion') return 'command substitution';
  if (type === 'ArithmeticExpansion') return 'arithmetic expansion';
  return 'parameter expansion';
}

/**
 * Whether a glob pattern can match a path outside the workspace when run from it: absolute or
 * home patterns, a `..` segment, or a segment starting with `.` that holds a wildcard (in dash,
 * the sandbox's /bin/sh, `.*` matches `..`). A wildcard elsewhere never matches a leading dot.
 */
export function globMayLeave(pattern: string): boolean {
  if (pattern.startsWith('/') || pattern.startsWith('~')) return true;
  return pattern.split('/').some((segment) => segment === '..' || (segment.startsWith('.') && /[*?[]/.test(segment)));
}

function isLiteral(w: Word): boolean {
  return (w.parts ?? []).every(isQuoted);
}

function isQuoted(p: WordPart): boolean {
  if (p.type === 'DoubleQuoted') return p.parts.every((c) => c.type === 'Literal');
  return p.type === 'Literal' || p.type === 'SingleQuoted' || p.type === 'AnsiCQuoted';
}

function cut(text: string): string {
  return text.length > QUOTE_MAX ? `${text.slice(0, QUOTE_MAX)}…` : text;
}
