/**
 * Finds every program a `run_shell` command would run, so a denied program cannot hide inside
 * an allowed one (pipes, lists, groups, substitutions, `sh -c`, wrappers such as `sudo` or `xargs`),
 * and records what the exact analysis does not model, so that nothing it cannot read is allowed.
 *
 * Parser: `unbash` (ISC, zero dependencies, pure TypeScript, no Node built-ins or globals, synchronous).
 * It parses Bash 5.3 into a typed AST with `$(...)`, backticks and `<(...)` parsed recursively, and
 * reports errors instead of throwing, which is what deterministic workflow code needs. The sandbox
 * runs every command with `bash --noprofile --norc -c` (activities/sandbox/exec-wrapper.ts): the
 * grammar parsed here is the grammar that runs. Rejected parsers: `bash-parser` (unmaintained,
 * needs `fs`), `shell-quote` (a tokenizer), `mvdan-sh` (GopherJS, needs `util`), `sh-syntax` and
 * `tree-sitter-bash` (WASM or native, asynchronous start: unusable in the workflow sandbox).
 *
 * Total and linear: the walk is iterative (an explicit stack, no recursion over the tree or over
 * wrapper chains), every nesting is bounded, and a throw inside it becomes a reason to ask. A
 * workflow task that fails on a command would fail again on every worker and on every replay.
 */
import { parse } from 'unbash';
import type { SyntaxNode } from 'unbash';
import { bareRedirection, programCommand, type ArgvFrame } from './shell-argv';
import { redirections, stateChange, visitNode, type Found, type Io, type Scope } from './shell-nodes';
import { cut } from './shell-words';
import type { CommandAnalysis } from './types';


// `sh -c "$(printf ...)"` style nesting is legal but has no honest use beyond a few levels.
const MAX_DEPTH = 8;
// Substitutions inside substitutions (`$($($(…)))`): far above anything written by hand. unbash
// itself stops at 256 levels of syntax.
const MAX_NESTING = 32;
// Here-documents pending on one line cost the parser more than linear time each; no command
// written by hand has this many.
const MAX_HEREDOCS = 64;
// unbash parses each substitution's text again when it is first read, so nesting costs its
// depth times the length: `$($($(…)))` thousands deep took 75 ms. Hand-written commands nest
// parentheses a few levels; past this the command asks without being parsed.
const MAX_PARENS = 24;
// Code handed on (`sh -c`, `eval`, `watch`) is parsed again: all of it together may be at most
// this many times the command's own length, so a chain of them stays linear.
const NESTED_CODE_FACTOR = 2;

/** One unit of work of the walk: a syntax node, a program's argument vector, or shell code. */
export type Frame = { kind: 'node'; node: SyntaxNode; scope: Scope } | ArgvFrame | { kind: 'code'; code: string; scope: Scope };

/** Parses a shell command and lists every program it would run, recursing into nested code. */
export function analyzeCommand(command: string): CommandAnalysis {
  const found: Found = { out: [], problems: [], settings: [], unmodelled: [] };
  try {
    budget = NESTED_CODE_FACTOR * command.length + 256;
    walk({ kind: 'code', code: command, scope: { src: command, depth: 0, nesting: 0, io: { writes: [], reads: [] } } }, found);
  } catch (err) {
    // Not expected; but a throw here would fail the workflow task on every worker and replay.
    found.problems.unshift(`the command could not be analysed (${err instanceof Error ? err.message.slice(0, 80) : 'unknown error'})`);
  }
  const [reason] = found.problems;
  const { out: commands, settings, unmodelled } = found;
  return reason === undefined ? { ok: true, commands, settings, unmodelled } : { ok: false, reason, commands, settings, unmodelled };
}

// What nested code may still be parsed in the current analysis (set by analyzeCommand; the
// analysis is synchronous, so one module variable serves every call in turn).
let budget = 0;

/** Pre-order walk with an explicit stack: children are pushed in reverse so they run in order. */
function walk(first: Frame, found: Found): void {
  const stack: Frame[] = [first];
  while (stack.length) {
    const frame = stack.pop()!;
    let next: Frame[];
    if (frame.kind === 'code') {
      if (frame.scope.depth > MAX_DEPTH) {
        found.problems.push('shell code is nested too deeply to analyse');
        continue;
      }
      if (frame.scope.depth > 0 && (budget -= frame.code.length) < 0) {
        found.problems.push('there is too much nested shell code to analyse');
        continue;
      }
      if (heredocs(frame.code) > MAX_HEREDOCS) {
        found.problems.push(`more than ${MAX_HEREDOCS} here-documents in one command`);
        continue;
      }
      if (parenDepth(frame.code) > MAX_PARENS) {
        found.problems.push(`more than ${MAX_PARENS} parentheses nested in one command`);
        continue;
      }
      next = [{ kind: 'node', node: parse(frame.code), scope: frame.scope }];
    } else if (frame.kind === 'argv') {
      next = programCommand(frame, found);
    } else {
      next = enter(frame.node, frame.scope, found);
    }
    for (let i = next.length - 1; i >= 0; i--) stack.push(next[i]!);
  }
}

/** What one node records, and the frames of its children (a command's own program first). */
function enter(node: SyntaxNode, scope: Scope, found: Found): Frame[] {
  switch (node.type) {
    case 'Script': {
      if (scope.nesting >= MAX_NESTING) {
        found.problems.push('shell code is nested too deeply to analyse');
        return [];
      }
      const where = scope.via ? ` in \`${scope.via}\` code` : '';
      for (const e of node.errors ?? []) found.problems.push(`${e.message} (at offset ${e.pos}${where})`);
      // A substitution's output goes to the outer command, not to the redirections around it.
      return visitNode(node, { ...scope, nesting: scope.nesting + 1, src: node.source ?? scope.src, io: { writes: [], reads: [] } }, found);
    }
    case 'Redirected': {
      const io = merge(scope.io, redirections(node.redirects, found));
      return [{ kind: 'node', node: node.command, scope: { ...scope, io } }, ...node.redirects.map((r): Frame => ({ kind: 'node', node: r, scope }))];
    }
    case 'Command': {
      const io = merge(scope.io, redirections(node.redirects, found));
      const children = visitNode(node, scope, found);
      for (const p of node.prefix) {
        if (p.type === 'Assignment') found.settings.push(`\`${cut(p.text)}\` assigns a variable`);
      }
      if (!node.name) {
        bareRedirection(node, scope, io, found);
        return children;
      }
      const change = stateChange(node.name);
      if (change) found.unmodelled.push(change);
      return [{ kind: 'argv', words: [node.name, ...node.args], end: node.end, scope, io, via: scope.via, chain: 0 }, ...children];
    }
    default:
      return visitNode(node, scope, found);
  }
}

/** How many `<<` the code holds (an upper bound of its here-documents), counting stops past the cap. */
function heredocs(code: string): number {
  let n = 0;
  for (let i = code.indexOf('<<'); i >= 0 && n <= MAX_HEREDOCS; i = code.indexOf('<<', i + 2)) n++;
  return n;
}

/** The deepest nesting of parentheses in the text, quotes or not (an upper bound of substitutions nested). */
function parenDepth(code: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < code.length; i++) {
    const c = code.charCodeAt(i);
    if (c === 40) deepest = Math.max(deepest, ++depth);
    else if (c === 41 && depth > 0) depth--;
  }
  return deepest;
}

function merge(a: Io, b: Io): Io {
  return { writes: [...a.writes, ...b.writes], reads: [...a.reads, ...b.reads] };
}
