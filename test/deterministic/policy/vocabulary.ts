/**
 * A vocabulary of shell commands for property tests of the policy: programs of the read-only list
 * and others, their writing and non-writing options, paths inside and outside the workspace,
 * redirections, pipes, lists, substitutions, expansions and assignments.
 */
import fc from 'fast-check';

/** Paths the sandbox workspace is seeded with (relative to /workspace). */
export const SEEDED = ['a.txt', 'b.txt', 'in', 'sub/c.txt', '.hidden'];
/** Executables the workspace is seeded with, named like read-only programs: running one writes outside. */
export const PLANTED: Record<string, string> = {
  cat: '#!/bin/sh\necho planted > /etc/planted-cat\n',
  'sub/ls': '#!/bin/sh\necho planted > /etc/planted-ls\n',
};

const inside = ['a.txt', 'b.txt', 'in', 'out', 'sub', 'sub/c.txt', '.', 'new.txt', '/workspace/a.txt', '/workspace/out', '/tmp/t.txt', '/tmp', '.hidden'];
const outside = ['/etc/pw-x', '/root/x', '../x', '/x', '/var/tmp/x', '~/x', '/usr/local/x', 'sub/../../x', '/workspace/../y', '/skills/z'];
const tricky = [
  '.*', '.*/x', '.*/.*/x', '{a.txt,/etc/pw-y}', '$HOME/x', '${PWD%/*}/x', '$(echo /x)', '`echo /y`', '/wor*', '/[e]tc/pw-z',
  '*.txt', 'sub/*', '"$X"', "'/etc/q'", '$((1))', '..', '*', '.[a-z]*/x',
];
const path = fc.constantFrom(...inside, ...inside, ...outside, ...tricky);

const word = fc.constantFrom('x', 'a', 'hello', 'b c', '-n', '1');

/** One simple command, with options that write and options that only read. */
const simple: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(fc.constantFrom('ls', 'ls -la', 'cat', 'head -n 1', 'tail -n 1', 'wc -l', 'grep -r x', 'du -s', 'stat', 'md5sum', 'nl', 'tac', 'rev', 'cut -c1', 'realpath', 'basename', 'dirname'), path)
      .map(([p, a]) => `${p} ${a}`),
  },
  fc.tuple(fc.constantFrom('sort', 'sort -u', 'sort -r'), path).map(([p, a]) => `${p} ${a}`),
  {
    weight: 2,
    arbitrary: fc.tuple(fc.constantFrom('sort -o', 'sort -uo', 'sort --output', 'sort -T', 'sort --out', 'sort -o'), path, path).map(([p, o, a]) => `${p} ${o} ${a}`),
  },
  { weight: 2, arbitrary: fc.tuple(path, fc.option(path, { nil: undefined })).map(([a, b]) => `uniq ${a}${b ? ` ${b}` : ''}`) },
  {
    weight: 3,
    arbitrary: fc.tuple(
      fc.constantFrom("'s/a/b/'", "-n 'p'", "'1d'", "'w OUT'", "'s/a/b/w OUT'", "'1e touch OUT'", "-i 's/a/b/'", '-i.bak p', "'r OUT'", "-e p -e 'W OUT'", "'1!G;h;$!d'", "-n '/a/,/b/p'"),
      path,
      path,
    ).map(([script, out, file]) => `sed ${script.replace(/OUT/g, out)} ${file}`),
  },
  fc.tuple(fc.constantFrom('-name "*.txt"', '-type f', '-fprint OUT', '-exec touch OUT \\;', '-delete', '-newer a.txt', '-fls OUT'), path, path)
    .map(([test, out, dir]) => `find ${dir} ${test.replace(/OUT/g, out)}`),
  fc.tuple(fc.constantFrom('touch', 'mkdir -p', 'rm', 'rm -f', 'tee', 'cp a.txt', 'mv b.txt', 'ln -s a.txt', 'truncate -s0'), path).map(([p, a]) => `${p} ${a}`),
  fc.tuple(fc.constantFrom('echo', 'printf %s', 'echo -n'), word).map(([p, a]) => `${p} '${a}'`),
  fc.tuple(fc.constantFrom('printf -v PATH %s', 'printf -v X %s'), path).map(([p, a]) => `${p} ${a}`),
  { weight: 2, arbitrary: fc.tuple(path).map(([a]) => `python3 -c "open('${a}','w')"`) },
  fc.tuple(path).map(([a]) => `dd if=/dev/zero of=${a} count=1`),
  fc.tuple(path).map(([a]) => `sh -c 'touch ${a}'`),
  fc.tuple(path).map(([a]) => `env X=1 touch ${a}`),
  fc.constantFrom('true', 'pwd', 'seq 3', 'which sh', 'test -f a.txt', '[ -d sub ]', 'cat'),
  fc.tuple(fc.constantFrom('./cat', 'sub/ls', '/workspace/cat', '/usr/bin/cat', '/bin/ls'), path).map(([p, a]) => `${p} ${a}`),
);

const redirected: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: simple },
  fc.tuple(simple, fc.constantFrom('>', '>>', '2>', '<', '&>'), path).map(([c, op, p]) => `${c} ${op} ${p}`),
  fc.tuple(simple).map(([c]) => `${c} 2>/dev/null`),
  fc.tuple(simple).map(([c]) => `${c} > /dev/null 2>&1`),
);

const assignment = fc.tuple(fc.constantFrom('X', 'PATH', 'HOME', 'TMPDIR', 'LD_PRELOAD'), path).map(([n, v]) => `${n}=${v}`);

const piece: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: redirected },
  fc.tuple(assignment, redirected).map(([a, c]) => `${a} ${c}`),
  assignment,
  fc.tuple(redirected).map(([c]) => `echo $(${c})`),
  fc.tuple(redirected).map(([c]) => `( ${c} )`),
  fc.tuple(redirected).map(([c]) => `for f in a.txt; do ${c}; done`),
);

/** A whole command line: pieces joined by pipes and lists. */
export const commandLine: fc.Arbitrary<string> = fc
  .tuple(piece, fc.array(fc.tuple(fc.constantFrom(' | ', '; ', ' && ', ' || '), piece), { maxLength: 2 }))
  .map(([first, rest]) => first + rest.map(([op, p]) => op + p).join(''));
