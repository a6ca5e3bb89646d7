/**
 * Words of generated commands: the fixture's files (fixture/) quoted every way bash allows, and
 * the words only known at run time (globs, braces, `~`, `..`, expansions) that the policy must
 * either model or refuse.
 */
import type { Rng } from './prng';

/** Files of the fixture workspace (and one that does not exist). `-i` is a file named like an option. */
export const FILES = [
  'a.txt', 'b.txt', 'in', 'f', 'x', 'victim.txt', 'notes.md', 'data.csv', 'old.tmp', '.hidden',
  'sub/c.txt', 'sub/deeper/d.txt', 'with space.txt', 'missing.txt',
];
export const DIRS = ['.', 'sub', 'sub/deeper', '/workspace', 'sub/..'];
/** Names a writing option could be given (new files and fixture files). */
export const TARGETS = ['out.txt', 'out', 'x', 'victim.txt', 'sub/new.txt', '/tmp/t', 'a.txt'];
/** Words only known at run time, or reaching outside the workspace. */
const TRICKY = [
  '*', '*.txt', 'sub/*', '.*', '*/', '[ab].txt', 'a.tx?', '{a,b}.txt', '{a.txt,b.txt}', '~', '~/a.txt', '~/x',
  '$HOME/a.txt', '"$HOME"/x', '..', '../workspace/a.txt', '/etc/passwd', '/tmp', '/dev/null', '-i', './-i', '--',
  '$(echo a.txt)', '`echo b.txt`', '${X:-a.txt}', '"${X:-a.txt}"', '$((1+1))', '$X', '"$@"', '$1', '$?', '$$',
  '$(touch x)', '<(cat a.txt)', '<(touch x)', '$((a[$(touch x)]))', '${X:=a.txt}', '${#X}', '${X/a/b}', '$\'\\x61.txt\'',
];

const PLAIN = /^[A-Za-z0-9_./,:=+@%^-]+$/;

/** `s` as one shell word, quoted one of the ways bash reads back as exactly `s`. */
export function quote(rng: Rng, s: string): string {
  const style = rng.weighted([
    [PLAIN.test(s) && !s.startsWith('-') ? 6 : 0, 'plain'],
    [3, 'single'],
    [2, 'double'],
    [1, 'ansi'],
    [s.length > 1 ? 1 : 0, 'split'],
  ] as const);
  switch (style) {
    case 'plain':
      return s;
    case 'single':
      return single(s);
    case 'double':
      return `"${s.replace(/[\\"$`]/g, (c) => `\\${c}`)}"`;
    case 'ansi':
      return ansi(rng, s);
    default: {
      const cut = rng.between(1, s.length - 1);
      return `${quote(rng, s.slice(0, cut))}${single(s.slice(cut))}`;
    }
  }
}

export function single(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** `$'…'` with some characters spelled as escapes (`\x61`, `\141`, `\n`). */
function ansi(rng: Rng, s: string): string {
  let out = '';
  for (const c of s) {
    const code = c.charCodeAt(0);
    if (c === '\\' || c === "'") out += `\\${c}`;
    else if (c === '\n') out += '\\n';
    else if (code < 128 && rng.chance(0.15)) out += rng.chance(0.5) ? `\\x${code.toString(16).padStart(2, '0')}` : `\\${code.toString(8)}`;
    else out += c;
  }
  return `$'${out}'`;
}

/** A file operand: mostly a fixture file, sometimes a folder or a tricky word. */
export function fileWord(rng: Rng, tricky = 0.12): string {
  if (rng.chance(tricky)) return rng.pick(TRICKY);
  if (rng.chance(0.1)) return quote(rng, rng.pick(DIRS));
  return quote(rng, rng.pick(FILES));
}

/** A word of text (echo's arguments, patterns). */
export function textWord(rng: Rng, tricky = 0.1): string {
  if (rng.chance(tricky)) return rng.pick(TRICKY);
  return quote(rng, rng.pick(['foo', 'bar', 'hello world', 'a', 'x y', 'it\'s', '-n', '42', 'foo|bar', '^b', 'a.*', '\\t', 'é']));
}
