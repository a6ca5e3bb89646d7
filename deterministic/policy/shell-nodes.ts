/**
 * What each kind of syntax node tells the policy, besides the programs it runs: assignments and
 * other settings (they change what later programs do), constructs the exact analysis does not
 * model (`[[ … ]]`, `coproc`, expansions in here-documents, `{fd}>` …), and the files that
 * redirections read and write.
 */
import { forEachChild } from 'unbash';
import type { Redirection, SyntaxNode, Word } from 'unbash';
import { cut, isLiteral, toArg } from './shell-words';
import type { Frame } from './shell';
import type { SimpleCommand } from './types';

/** Files written and read through redirections around a command. */
export interface Io {
  writes: string[];
  reads: string[];
}

/** Where the walk is: the source positions refer to, nesting, what runs this code, redirections. */
export interface Scope {
  src: string;
  depth: number;
  /** Scripts entered so far (the command itself, substitutions, `sh -c` code): bounds the nesting. */
  nesting: number;
  via?: string;
  io: Io;
}

/** What the walk has found so far. */
export interface Found {
  out: SimpleCommand[];
  problems: string[];
  settings: string[];
  unmodelled: string[];
}

// Builtins that change the shell itself, and so what every later program does or where it runs.
const STATEFUL = new Set([
  'cd', 'pushd', 'popd', 'set', 'shopt', 'alias', 'unalias', 'enable', 'hash', 'export', 'unset', 'declare', 'typeset',
  'local', 'readonly', 'read', 'mapfile', 'readarray', 'getopts', 'let', 'umask', 'ulimit', 'bind', 'complete',
]);

/** Why running this command name changes the shell's own state, for a literal builtin name. */
export function stateChange(name: Word): string | undefined {
  return isLiteral(name) && STATEFUL.has(name.value) ? `\`${name.value}\` changes the shell's own state` : undefined;
}

/** Records what the node says and returns the frames of its children, in order. */
export function visitNode(node: SyntaxNode, scope: Scope, found: Found): Frame[] {
  switch (node.type) {
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
    // What the exact analysis does not model: each asks, naming itself.
    case 'TestCommand':
      found.unmodelled.push('a `[[ … ]]` conditional expression is not modelled by the policy');
      break;
    case 'Coproc':
      found.unmodelled.push('a `coproc` is not modelled by the policy');
      break;
    case 'Case':
      if (!isLiteral(node.word) || node.items.some((item) => item.pattern.some(expands))) {
        found.unmodelled.push('a `case` on a word or pattern only known at run time is not modelled by the policy');
      }
      break;
    case 'HereDoc':
      if (!node.delimiter?.quoted && (node.body.parts ?? []).some((p) => p.type !== 'Literal')) {
        found.unmodelled.push('an expansion in a here-document is not modelled by the policy');
      }
      if (node.descriptor?.type === 'FileDescriptorVariable') found.unmodelled.push(fdVariable(node.descriptor.name));
      break;
    case 'HereString':
      if (node.target && !isLiteral(node.target)) found.unmodelled.push('a `<<<` here-string with an expansion is not modelled by the policy');
      if (node.descriptor?.type === 'FileDescriptorVariable') found.unmodelled.push(fdVariable(node.descriptor.name));
      break;
    case 'Redirect':
      if (node.descriptor?.type === 'FileDescriptorVariable') found.unmodelled.push(fdVariable(node.descriptor.name));
      break;
    case 'ProcessSubstitution':
      // The parser ends a word at a process substitution; bash does not: `<(ls)x` is one word to
      // bash, and in `<(ls)#<(touch x)` the `#` is text, not a comment hiding the second command.
      if (joined(scope.src, node.pos, node.end)) found.unmodelled.push(`a process substitution joined to other text in one word (\`${cut(scope.src.slice(node.pos, node.end + 1))}…\`) is not modelled by the policy`);
      break;
  }
  const children: Frame[] = [];
  forEachChild(node, (child) => {
    if (LEAVES.has(child.type) || (child.type === 'Glob' && !child.parts) || (child.type === 'Word' && plainWord(child))) return;
    children.push({ kind: 'node', node: child, scope });
  });
  return children;
}

/** A word of literal and quoted text and simple globs: nothing below it runs or is recorded. */
function plainWord(w: Word): boolean {
  return (w.parts ?? []).every(
    (p) => LEAVES.has(p.type) || (p.type === 'Glob' && !p.parts) || (p.type === 'DoubleQuoted' && p.parts.every((c) => c.type === 'Literal')),
  );
}

// Nodes with nothing below them and nothing to record: not worth a frame each (a command of
// thousands of words would make thousands of frames for its quoted and literal text).
const LEAVES = new Set(['Literal', 'SingleQuoted', 'AnsiCQuoted', 'SimpleExpansion', 'HereDocDelimiter', 'FileDescriptor', 'Negation', 'Time', 'Names', 'Unknown']);

/** Bash's metacharacters: only these end a word (a `#` starts a comment only at a word's start). */
const WORD_END = /[\s|&;()<>]/;

/** Whether the text at `pos`..`end` touches a character that bash keeps in the same word. */
function joined(src: string, pos: number, end: number): boolean {
  const before = src[pos - 1];
  const after = src[end];
  return (before !== undefined && !WORD_END.test(before)) || (after !== undefined && !WORD_END.test(after));
}

function fdVariable(name: string): string {
  return `\`{${cut(name)}}\` in a redirection assigns a variable`;
}

/** Whether a pattern word holds an expansion (globs in a `case` pattern only match). */
function expands(w: Word): boolean {
  return (w.parts ?? []).some((p) => !['Literal', 'SingleQuoted', 'Glob'].includes(p.type) && !(p.type === 'DoubleQuoted' && p.parts.every((c) => c.type === 'Literal')));
}

/** The files a list of redirections writes and reads; a target only known at run time is a problem. */
export function redirections(list: readonly Redirection[], found: Found): Io {
  const io: Io = { writes: [], reads: [] };
  for (const r of list) {
    // Here-documents and here-strings feed text, not files.
    if (r.type !== 'Redirect' || !r.target) continue;
    const target = toArg(r.target);
    if ((r.operator === '>&' || r.operator === '<&') && /^(\d+|-)$/.test(target.value)) continue;
    if (!target.literal) found.problems.push(`the redirection target \`${target.value}\` is only known at run time`);
    if (target.unclear) found.unmodelled.push(`the redirection target \`${cut(target.value)}\` (${target.unclear}) is not understood by the policy`);
    if (r.operator !== '<' && r.operator !== '<&') io.writes.push(target.value);
    if (r.operator === '<' || r.operator === '<&' || r.operator === '<>') io.reads.push(target.value);
  }
  return io;
}
