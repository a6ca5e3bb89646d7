/**
 * Words of a shell command as the program will receive them: their value, whether it is known
 * before the command runs, and (for the exact analysis) what in them the policy does not read.
 */
import type { Assignment, Word, WordPart } from 'unbash';
import type { Arg } from './types';

// Words quoted in reasons are cut: a reason is recorded in history with every decision.
const QUOTE_MAX = 80;

/** A word quoted in a reason, cut to a readable length. */
export function cut(text: string): string {
  return text.length > QUOTE_MAX ? `${text.slice(0, QUOTE_MAX)}…` : text;
}

/** The argument a word (or an assignment given as an argument) becomes. */
export function toArg(w: Word | Assignment): Arg {
  if (w.type === 'Assignment') {
    const unknown = w.value.type === 'Word' ? unknownIn(w.value) : 'an array value';
    const literal = w.value.type === 'Word' && isLiteral(w.value);
    const unclear = w.value.type === 'Word' ? unclearIn(w.value, true) : undefined;
    return { value: w.text, literal, ...(unknown ? { unknown } : {}), ...(unclear ? { unclear } : {}), pos: w.pos, end: w.end };
  }
  const parts = w.parts ?? [];
  // Globs and braces keep their pattern in `value`; real expansions fall back to the source text.
  const expands = !parts.every((p) => isQuoted(p) || p.type === 'Glob' || p.type === 'BraceExpansion' || p.type === 'ExtendedGlob');
  const unknown = unknownIn(w);
  const unclear = unclearIn(w, /^[A-Za-z_][A-Za-z0-9_]*=/.test(w.text));
  const glob = parts.some((p) => p.type === 'Glob' || p.type === 'ExtendedGlob');
  return {
    value: expands ? w.text : w.value, literal: parts.every(isQuoted),
    ...(unknown ? { unknown } : {}), ...(unclear ? { unclear } : {}), ...(glob ? { glob } : {}),
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

/**
 * What the exact analysis does not read in a word although it has no expansion: ANSI-C strings
 * with escapes (`$'\x41'`: the decoding is bash's, not ours to guess), locale strings, and tilde
 * expansion (`~`, `~user`, and after `=` or `:` in an assignment-like word, as bash expands it).
 */
function unclearIn(w: Word, assignmentLike = false): string | undefined {
  const parts = w.parts ?? [];
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (p.type === 'AnsiCQuoted' && p.text.slice(2, -1).includes('\\')) return 'an ANSI-C string with escapes';
    if (p.type === 'LocaleString') return 'a $"…" locale string';
    if (p.type === 'Literal' && ((i === 0 && p.text.startsWith('~')) || (assignmentLike && /[=:]~/.test(p.text)))) {
      return 'tilde expansion';
    }
  }
  return undefined;
}

function expansionKind(type: string): string {
  if (type === 'CommandExpansion') return 'command substitution';
  if (type === 'ArithmeticExpansion') return 'arithmetic expansion';
  return 'parameter expansion';
}

/**
 * Whether a glob pattern can match a path outside the workspace when run from it: absolute or
 * home patterns, a `..` segment, or a segment starting with `.` that holds a wildcard (some
 * shells match `..` with `.*`). A wildcard elsewhere never matches a leading dot.
 */
export function globMayLeave(pattern: string): boolean {
  if (pattern.startsWith('/') || pattern.startsWith('~')) return true;
  return pattern.split('/').some((segment) => segment === '..' || (segment.startsWith('.') && /[*?[]/.test(segment)));
}

/** Whether the word has no expansion, glob or brace: its value is exactly what it says. */
export function isLiteral(w: Word): boolean {
  return (w.parts ?? []).every(isQuoted);
}

function isQuoted(p: WordPart): boolean {
  if (p.type === 'DoubleQuoted') return p.parts.every((c) => c.type === 'Literal');
  return p.type === 'Literal' || p.type === 'SingleQuoted' || p.type === 'AnsiCQuoted';
}
