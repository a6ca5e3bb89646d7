/**
 * Simple commands of the programs the default policy treats as read-only (READ_ONLY_PROGRAMS,
 * find, sed, git), with options from their real option lists: the ones that only read, and the
 * ones that write or run code (sort -o, sed -i / w / e / v / labels, find -delete/-fprint/-exec,
 * tree -o, file -C, uniq in out, printf -v, test -v 'a[$(…)]'). Templates: `{file}` a file word,
 * `{dir}`, `{target}` a file to write, `{n}` a number, `{text}`, `{glob}`.
 */
import { READ_ONLY_PROGRAMS } from '../../deterministic/policy/defaults';
import type { Rng } from './prng';
import { DIRS, fileWord, quote, TARGETS, textWord } from './words';

interface Spec {
  /** Options (or option clusters with values) that only read. */
  read: string[];
  /** Options or script words that write files or run programs. */
  write?: string[];
  /** Operands after the options. */
  operands: string[];
  /** The program's own word before the options (git's subcommand). */
  head?: string[];
}

const FILE1 = ['{file}', '{file}', '{file} {file}', ''];
const GREP = ['-i', '-v', '-c', '-n', '-l', '-L', '-r', '-w', '-x', '-o', '-q', '-s', '-h', '-H', '-E', '-F', '-e {text}', '-f {file}',
  '--include=*.txt', '-A 1', '-B 1', '-C 1', '-m 1', '--color=never', '-z', '-R', '--exclude-dir=sub', '-in', '-rn'];
const SUMS = { read: ['-b', '-t', '--tag', '-z'], operands: FILE1 };
const TEST_READ = ['-f {file}', '-d {dir}', '-e {file}', '-s {file}', '-r {file}', '-n {text}', '-z {text}', '{text} = {text}',
  '1 -eq 1', '2 -gt 1', '-v X', '! -f {file}', '{file} -nt {file}', '-f {file} -a -d {dir}', 'a != b'];
const TEST_WRITE = ["-v 'a[$(touch x)]'", "'a[$(touch x)]' -eq 1", "-v 'b[$(touch y)]'", "'x[`touch z`]' -lt 2", '-v "a[\\$(touch q)]"'];

export const SPECS: Record<string, Spec> = {
  ls: { read: ['-l', '-a', '-la', '-A', '-1', '-R', '-h', '-S', '-t', '-r', '-d', '-F', '-i', '-s', '--color=never', '--all',
    '--sort=size', '-I {glob}', '--hide={glob}', '-w 80', '--time-style=iso', '-Q', '-lh', '--group-directories-first'], operands: ['', '{file}', '{dir}', '{file} {dir}'] },
  cat: { read: ['-n', '-b', '-s', '-A', '-E', '-T', '-v', '-e', '-t', '-u'], operands: ['{file}', '{file}', '{file} {file}', '-'] },
  head: { read: ['-n {n}', '-c {n}', '-q', '-v', '-n -2', '-{n}', '--lines={n}'], operands: FILE1 },
  tail: { read: ['-n {n}', '-c {n}', '-q', '-v', '-n +2', '--lines={n}', '-{n}'], operands: FILE1 },
  grep: { read: GREP, operands: ['{text} {file}', '{text} {file} {file}', '-e {text} {file}', '{text}', '-r {text} {dir}'] },
  egrep: { read: GREP, operands: ['{text} {file}', '{text}'] },
  fgrep: { read: GREP, operands: ['{text} {file}', '{text}'] },
  wc: { read: ['-l', '-w', '-c', '-m', '-L', '--files0-from={file}'], operands: FILE1 },
  sort: {
    read: ['-r', '-n', '-u', '-k 2', '-t ,', '-f', '-b', '-h', '-V', '-s', '-c', '-m', '-z', '--debug', '-k1,1', '-rn', '-nr',
      '--reverse', '--key=2', '-S 1M', '--parallel=1', '-S 1k'],
    write: ['-o {target}', '--output={target}', '-T {dir}', '--temporary-directory=/tmp', '--compress-program=gzip', '-uo {target}', '--out={target}', '-o{target}'],
    operands: FILE1,
  },
  uniq: { read: ['-c', '-d', '-u', '-i', '-f 1', '-s 1', '-w 2', '-D', '--count'], write: ['{file} {target}'], operands: ['', '{file}'] },
  cut: { read: ['-d , -f 1', '-f 1', '-c 1-3', '-b 1', '--complement -c 1', '-s -f 2', "-d ' ' -f 1", '--fields=1'], operands: ['', '{file}'] },
  tr: { read: ['-d x', "-s ' '", '-c a-z _', "-cd '[:alnum:]\\n'"], operands: ['a-z A-Z', "'[:lower:]' '[:upper:]'", 'abc xyz', ''] },
  echo: { read: ['-n', '-e', '-E'], operands: ['{text}', '{text} {text}', '{text} {file}', ''] },
  printf: { read: [], write: ['-v X', '-v Y %s'], operands: ["'%s\\n' {text}", '"%d\\n" {n}', '%s {text} {text}', "'%q\\n' {text}", '"%b" {text}', '{text}'] },
  pwd: { read: ['-L', '-P'], operands: [''] },
  stat: { read: ['-c %s', '-L', '-f', '--format=%n', '-t', "--printf='%n\\n'", '-c %a'], operands: ['{file}', '{file} {dir}'] },
  file: { read: ['-b', '-i', '-L', '-z', '--mime-type', '-k'], write: ['-C', '-C -m {target}', '--compile'], operands: ['{file}', '{file} {file}'] },
  du: { read: ['-s', '-h', '-a', '-c', '-k', '--max-depth=1', '-b', '-sh', '-d 1'], operands: ['', '{dir}', '{file}'] },
  tree: { read: ['-a', '-L 2', '-d', '-f', '-i', '--noreport', '-C'], write: ['-o {target}', '-R -H .', '-fo {target}', '-ao {target}'], operands: ['', '{dir}'] },
  // `-l`/`--paginate` pipe the output through pr.
  diff: { read: ['-u', '-q', '-y', '-r', '-N', '-i', '-w', '-B', '--brief', '-c', '--color=never', '-U 1', '-l', '--paginate'], operands: ['{file} {file}', '{dir} {dir}'] },
  cmp: { read: ['-s', '-l', '-b', '-n 10', '-i 2'], operands: ['{file} {file}'] },
  comm: { read: ['-1', '-2', '-3', '-12', '--check-order', '--nocheck-order', '-23'], operands: ['{file} {file}'] },
  basename: { read: ['-a', '-s .txt'], operands: ['{file}', '{file} {file}'] },
  dirname: { read: [], operands: ['{file}', '{file} {dir}'] },
  realpath: { read: ['-e', '-m', '-s', '--relative-to=sub', '-q', '-z', '--relative-base=.'], operands: ['{file}', '{file} {dir}'] },
  which: { read: ['-a'], operands: ['ls', 'cat python3', 'sed', 'nonexistent', 'ls cat'] },
  true: { read: [], operands: ['', '{text}'] },
  false: { read: [], operands: ['', '{file}'] },
  test: { read: TEST_READ, write: TEST_WRITE, operands: [''] },
  '[': { read: TEST_READ, write: TEST_WRITE, operands: [''] },
  nl: { read: ['-b a', '-n ln', '-w 3', '-s :', '-v 10', '-ba'], operands: FILE1 },
  tac: { read: ['-s ,', '-r', '-b', '--separator=x'], operands: FILE1 },
  rev: { read: [], operands: FILE1 },
  paste: { read: ['-d ,', '-s', "-d '\\t'", '--serial'], operands: ['{file} {file}', '{file}', '- {file}'] },
  // A long sequence makes sort spill to temporary files.
  seq: { read: ['-s ,', '-w', '-f %g', "-s ' '"], operands: ['{n}', '1 {n}', '1 2 {n}', '1 30000'] },
  md5sum: SUMS,
  sha256sum: SUMS,
  find: {
    read: ['-name {glob}', '-iname {glob}', '-type f', '-type d', '-maxdepth 1', '-mindepth 1', '-size +0', '-newer a.txt', '-empty',
      "-path './sub/*'", '-print', '-print0', '-ls', "-printf '%p\\n'", '-name sub -prune -o -print', '! -name {glob}', '-not -type d',
      "-regex '.*txt'", '-user agent', '-perm -u+r', '-mtime -1', '-quit', '-depth', '-readable', '-type f -o -type d'],
    write: ['-delete', '-fprint {target}', '-fprint0 {target}', '-fprintf {target} %p', '-fls {target}', '-exec cat {} \\;',
      '-exec rm {} +', '-execdir ls {} \\;', "-ok cat '{}' ';'", "-exec sh -c 'touch y' \\;", '-exec touch {} +'],
    head: ['', '.', '.', 'sub', '/workspace', '. sub'],
    operands: [''],
  },
  sed: {
    read: ['-n', '-E', '-r', '-s', '-z', '-u', '--posix', '--debug', '-l 5', '--sandbox'],
    write: ['-i', '-i.bak', '--in-place', '-ni', '-n -i'],
    operands: ['{script} {file}', '{script} {file} {file}', '-e {script} {file}', '-e {script} -e {script} {file}', '{script}'],
  },
  git: {
    read: ['--stat', '--oneline', '-n 1', '--name-only', '--cached', '-p', '--no-color'],
    write: ['--output={target}', '--ext-diff', '-c core.pager=touch', '--exec-path=/tmp', '--textconv', '--output {target}', '--out={target}'],
    head: ['status', 'diff', 'log', 'show', 'diff HEAD'],
    operands: ['', '--', '{file}'],
  },
};

const SED_READ = ['s/a/b/', 's/foo/bar/g', '1,3p', '/foo/d', 'y/abc/xyz/', '$!N', '=', 'l', 'q', '2q', ':a;N;$!ba;s/\\n/ /g',
  '/x/{p;d}', 'a text', 'i foo', 'c bar', '1d', '$p', '/^b/!d', 's/\\(a\\)/\\1\\1/', 'n;d', 'G', 'h;x', '0~2p', 's/a/b/2',
  's|/|_|g', '/foo/,/bar/p', 'p', '1~2d', 's/o/0/gI', '/a/I p', 'F', 'z;p', '2{p;q}', 'b end; :end'];
const SED_WRITE = ['w out.txt', 's/a/b/w out.txt', 'e', 's/a/b/e', '1e touch p', 'r a.txt', 'R a.txt', 'W out.txt', ':x w out.txt',
  'v 4.2 e touch p', 'v;w out', '/x/w out.txt', ':a w x', 's/x/y/;w out', '1{w out\n}', 'b x w out', 'T;w out', 's/a/b/;e touch q',
  '$!{w out\n}', 'v\nw out', '# c\nw out', 'y/a/b/;w out'];

/** Programs the default policy may allow, weighted toward the everyday ones. */
const WEIGHTS: Record<string, number> = { ls: 5, cat: 5, grep: 5, head: 4, tail: 3, wc: 4, sort: 4, uniq: 3, find: 4, sed: 5, echo: 4, diff: 2, cut: 2, printf: 2 };
const NAMES = [...READ_ONLY_PROGRAMS, 'find', 'sed', 'git'];
const CHOICES = NAMES.map((n) => [WEIGHTS[n] ?? 1, n] as const);

/** One simple command of an allowed program; with probability `writing`, one of its writing options. */
export function simpleCommand(rng: Rng, writing: number, tricky = 0.1): string {
  const name = rng.weighted(CHOICES);
  const spec = SPECS[name]!;
  const words: string[] = [name];
  if (spec.head) words.push(rng.pick(spec.head));
  const count = rng.weighted([[3, 0], [4, 1], [2, 2], [1, 3]] as const);
  for (let i = 0; i < count && spec.read.length; i++) words.push(rng.pick(spec.read));
  let script = rng.chance(0.85) ? rng.pick(SED_READ) : rng.pick(SED_WRITE);
  if (spec.write && rng.chance(writing)) {
    const w = rng.pick(spec.write);
    words.splice(rng.between(spec.head ? 2 : 1, words.length), 0, w);
  } else if (name === 'sed' && rng.chance(writing)) script = rng.pick(SED_WRITE);
  let operands = rng.pick(spec.operands);
  if (name === 'sed' && !operands.includes('{script}')) operands = `{script} ${operands}`;
  words.push(operands);
  if (name === '[') words.push(']');
  return fill(rng, words.filter(Boolean).join(' '), script, tricky);
}

function fill(rng: Rng, template: string, script: string, tricky: number): string {
  return template.replace(/\{(file|dir|target|n|text|glob|script)\}/g, (_, kind: string) => {
    switch (kind) {
      case 'file':
        return fileWord(rng, tricky);
      case 'dir':
        return quote(rng, rng.pick(DIRS));
      case 'target':
        return quote(rng, rng.pick(TARGETS));
      case 'n':
        return String(rng.between(1, 5));
      case 'text':
        return textWord(rng, tricky);
      case 'glob':
        return rng.chance(0.8) ? quote(rng, rng.pick(['*.txt', '*.tmp', 'a*', '*', '?.txt'])) : rng.pick(['*.txt', 'a*']);
      default:
        return quote(rng, script);
    }
  });
}
