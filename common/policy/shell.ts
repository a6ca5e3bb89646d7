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
import { innerCommands } from './wrappers';

/** One program the command would run, with its arguments and the files it is redirected to. */
export interface SimpleCommand {
  /** Program name without its directory (`/usr/bin/sudo` → `sudo`); '' for a bare redirection. */
  program: string;
  args: string[];
  /** The source text the program was found in. */
  text: string;
  /** Files written through `>`, `>>`, `&>`, `>|`, `<>`, including those of an enclosing group. */
  redirects: string[];
  /** Files read through `<` or `<>`. */
  reads: string[];
  /** What launches it, when not the shell itself (`sudo`, `xargs`, `find -exec`, `bash -c`). */
  via?: string;
}

/** Every program of a command, or why that cannot be known before it runs (with what was found). */
export type CommandAnalysis =
  | { ok: true; commands: SimpleCommand[] }
  | { ok: false; reason: string; commands: SimpleCommand[] };

/** A word of the command as the program will receive it. */
export interface Arg {
  value: string;
  /** No expansion, glob or brace: the value is exactly what the program receives. */
  literal: boolean;
  pos: number;
  end: number;
}
interface Io {
  writes: string[];
  reads: string[];
}
interface Scope {
  src: string;
  depth: number;
  via?: string;
  io: Io;
}
interface Found {
  out: SimpleCommand[];
  problems: string[];
}

// `sh -c "$(printf ...)"` style nesting is legal but has no honest use beyond a few levels.
const MAX_DEPTH = 8;

/** Parses a shell command and lists every program it would run, recursing into nested code. */
export function analyzeCommand(command: string): CommandAnalysis {
  const found: Found = { out: [], problems: [] };
  analyzeSource(command, { src: command, depth: 0, io: { writes: [], reads: [] } }, found);
  const [reason] = found.problems;
  return reason === undefined ? { ok: true, commands: found.out } : { ok: false, reason, commands: found.out };
}

function analyzeSource(source: string, scope: Scope, found: Found): void {
  if (scope.depth > MAX_DEPTH) {
    found.problems.push('shell code is nested too deeply to analyse');
    return;
  }
  visit(parse(source), { ...scope, src: source }, found);
}

function visit(node: SyntaxNode, scope: Scope, found: Found): void {
  if (node.type === 'Script') {
    const where = scope.via ? ` in \`${scope.via}\` code` : '';
    for (const e of node.errors ?? []) found.problems.push(`${e.message} (at offset ${e.pos}${where})`);
    // A substitution's output goes to the outer command, not to the redirections around it.
    scope = { ...scope, src: node.source ?? scope.src, io: { writes: [], reads: [] } };
  } else if (node.type === 'Redirected') {
    const io = merge(scope.io, redirections(node.redirects, found));
    forEachChild(node, (child) => visit(child, child === node.command ? { ...scope, io } : scope, found));
    return;
  } else if (node.type === 'Command') {
    simpleCommand(node, scope, found);
  }
  forEachChild(node, (child) => visit(child, scope, found));
}

function simpleCommand(node: Command, scope: Scope, found: Found): void {
  const io = merge(scope.io, redirections(node.redirects, found));
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
  found.out.push({ program, args: values, text, redirects: io.writes, reads: io.reads, ...(via ? { via } : {}) });
  if (!head.literal) {
    found.problems.push(`the program \`${head.value}\` is only known at run time`);
    return;
  }
  for (const inner of innerCommands(program, args)) {
    if ('opaque' in inner) found.problems.push(inner.opaque);
    else if ('argv' in inner) {
      const last = inner.argv[inner.argv.length - 1];
      runArgv(inner.argv, last ? last.end : end, scope, io, found, inner.via);
    } else if (inner.code.every((a) => a.literal)) {
      const code = inner.code.map((a) => a.value).join(' ');
      analyzeSource(code, { src: code, depth: scope.depth + 1, via: inner.via, io: { writes: [], reads: [] } }, found);
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
    return { value: w.text, literal: w.value.type === 'Word' && isLiteral(w.value), pos: w.pos, end: w.end };
  }
  const parts = w.parts ?? [];
  // Globs and braces keep their pattern in `value`; real expansions fall back to the source text.
  const expands = !parts.every((p) => isQuoted(p) || p.type === 'Glob' || p.type === 'BraceExpansion' || p.type === 'ExtendedGlob');
  return { value: expands ? w.text : w.value, literal: parts.every(isQuoted), pos: w.pos, end: w.end };
}

function isLiteral(w: Word): boolean {
  return (w.parts ?? []).every(isQuoted);
}

function isQuoted(p: WordPart): boolean {
  if (p.type === 'DoubleQuoted') return p.parts.every((c) => c.type === 'Literal');
  return p.type === 'Literal' || p.type === 'SingleQuoted' || p.type === 'AnsiCQuoted';
}
