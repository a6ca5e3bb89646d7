import { describe, expect, it } from 'vitest';
// The frozen knowledge of version 2 decisions (deterministic/policy/v2), and the sed script scanner.
import { codeArgs, hasInspector, notReadOnly } from '../../../deterministic/policy/v2/options';
import { READ_ONLY_PROGRAMS } from '../../../deterministic/policy/defaults';
import { sedScriptProblem } from '../../../deterministic/policy/programs/sed-script';

const words = (line: string) => line.split(' ').filter(Boolean);
const check = (line: string) => {
  const [program, ...args] = words(line);
  return notReadOnly(program!, args);
};

describe('notReadOnly of version 2 (frozen for replay)', () => {
  it('knows every program of the read-only list, and no interpreter', () => {
    for (const program of READ_ONLY_PROGRAMS) expect(hasInspector(program), program).toBe(true);
    for (const program of ['python3', 'node', 'perl', 'ruby', 'sh', 'bash', 'awk', 'env', 'xargs', 'tee']) {
      expect(READ_ONLY_PROGRAMS).not.toContain(program);
      expect(notReadOnly(program, [])).toMatch(/does not know/);
    }
  });

  it.each([
    ['sort -o out in', /`-o` writes a file/],
    ['sort -uo out in', /`-o` writes a file/],
    ['sort -ruoout in', /`-o` writes a file/],
    ['sort --output=out in', /`--output` writes a file/],
    ['sort --outp out in', /`--output` writes a file/],
    ['sort -T /tmp in', /`-T` writes temporary files/],
    ['sort --compress-program=gzip in', /`--compress-program` runs a program/],
    ['sort -Q in', /`-Q` is not known/],
    ['sort --bogus in', /`--bogus` is not known/],
    ['uniq in out', /second file operand/],
    ['uniq -c -- in out', /second file operand/],
    ['sed -i s/a/b/ f', /`-i` edits files in place/],
    ['sed -ni p f', /`-i` edits/],
    ['sed --in-pl p f', /`-i` edits/],
    ['sed -s p f', /`-s`/],
    ['sed -f x.sed f', /`-f` reads a sed script/],
    ['sed --file=x.sed f', /`-f` reads a sed script/],
    ['sed --s p f', /`--s` is not known/],
    ['sed', /without a script/],
    ['printf -v X %s', /`-v` assigns a variable/],
    ['file -C -m m', /`-C` writes a compiled magic file/],
    ['file -zC', /`-C`/],
    ['file --comp', /`--compile`/],
    ['tree -o out', /`-o` writes/],
    ['tree -aRo x', /`-o` writes/],
    ['tree -R', /`-R` writes 00Tree.html/],
    ['find . -exec rm {} +', /`-exec`/],
    ['find . -fprintf out %p', /`-fprintf`/],
    ['find . -delete', /`-delete`/],
    ['git diff --output=x', /`--output` writes a file/],
    ['git diff --out=x', /`--output` writes a file/],
    ['git log --ext-diff', /`--ext-diff` runs an external diff/],
    ['git show --textconv', /`--textconv` runs text conversion/],
    ['git diff --exec-path=x', /`--exec-path`/],
    ['git status --git-dir=x', /`--git-dir`/],
    ['git status --work-tree=x', /`--work-tree`/],
    ['git log -c', /`-c` changes git/],
    ['git log -C', /`-C` changes git/],
  ])('finds that %j is not read-only', (line, reason) => {
    expect(check(line)).toMatch(reason);
  });

  it.each([
    'sort in', 'sort -u -k 2 -t , in', 'sort -k2o in', 'sort --key=2 --field-separator=, in', 'sort -- -o',
    'uniq in', 'uniq -c in', 'uniq -f 1 -s 2 in', 'uniq -', 'sed -n p f', 'sed -e p -e d f', "sed --expression=s/a/b/g f", 'sed -E s/a+/b/ f',
    'sed -n -- p -i', 'printf %s x', 'echo -v', 'file -b x', 'file -m magic x', 'tree -L 2 -P *.go', 'find . -name x -print',
    'git status --short', 'git diff --text', 'git diff --stat HEAD', 'git log --oneline --no-ext-diff --no-textconv', 'git show HEAD -- -c',
    'ls -la', 'cat -n a', 'grep -rn x .', 'wc -l a', 'head -c 10 a',
  ])('finds that %j only reads', (line) => {
    expect(check(line)).toBeUndefined();
  });

  it('is unsure of a program with writing options given a glob, which may expand to `-i` or a second operand', () => {
    expect(notReadOnly('sed', ['-n', 'p', '*'], ['*'])).toMatch(/`\*` can expand to option names or more operands/);
    expect(notReadOnly('uniq', ['*.txt'], ['*.txt'])).toMatch(/can expand/);
    expect(notReadOnly('find', ['*'], ['*'])).toMatch(/can expand/);
    expect(notReadOnly('cat', ['*'], ['*'])).toBeUndefined();
  });

  it('tells which arguments of sed are its script, not file names', () => {
    expect([...codeArgs('sed', words("-n /a/,/b/p f"))]).toEqual([1]);
    expect([...codeArgs('sed', ['-e', '/a/d', '-e/b/d', 'f'])]).toEqual([1, 2]);
    expect([...codeArgs('cat', ['/a/'])]).toEqual([]);
  });
});

describe('sedScriptProblem', () => {
  it.each([
    ['w out', /`w` writes/],
    ['1w out', /`w` writes/],
    ['/x/W out', /`W` writes/],
    ['$r /etc/passwd', /`r` reads/],
    ['R other', /`R` reads/],
    ['1e rm -rf .', /`e` runs/],
    ['e', /`e` runs/],
    ['s/a/b/w out', /`w` flag/],
    ['s/a/b/gw out', /`w` flag/],
    ['s|a|b|e', /`e` flag/],
    ['s/a/b/3pe', /`e` flag/],
    ['p;w x', /`w` writes/],
    ['/a/{p;w x\n}', /`w` writes/],
    ['1!{\nw x\n}', /`w` writes/],
    ['s/a\\/w/b/;w x', /`w` writes/],
    ['y/abc/xyz/;e', /`e` runs/],
    ['\\%a%w x', /`w` writes/],
    ['0,/a/ w x', /`w` writes/],
    ['1~2w x', /`w` writes/],
    ['1,+3 w x', /`w` writes/],
    ['b end; w x', /`w` writes/],
    ['k', /not known/],
    // The delimiter ends the part even inside brackets; when that reads differently, the rest is unsure.
    ['s/[/]/x/', /not known/],
    ['s/a/b/x', /not known/],
    ['s/a/b', /unterminated/],
    ['{p', /unbalanced/],
    ['p}', /unbalanced/],
    ['p x', /unexpected text/],
  ])('finds what %j does', (script, problem) => {
    expect(sedScriptProblem(script)).toMatch(problem);
    expect(sedScriptProblem(script, 'v2')).toMatch(problem);
  });

  it.each([
    // GNU sed ends a label (and v's argument) at whitespace; the next command starts there.
    [':x w out.txt', /`w` writes/],
    ['v 4.2 e touch p', /`e` runs/],
    ['b x w out', /`w` writes/],
    ['t x;e', /`e` runs/],
    [':x	w out', /`w` writes/],
    // Only plain label characters are understood.
    [":'x' p", /label .* not understood/],
    [':x#y', /label .* not understood/],
    ['bx}', /label .* not understood/],
    [':', /without a label/],
  ])('reads %j as GNU sed does, where version 2 read the label to the end of the line', (script, problem) => {
    expect(sedScriptProblem(script)).toMatch(problem);
  });

  it('kept the version 2 reading of labels for turns judged with it', () => {
    expect(sedScriptProblem(':x w out.txt', 'v2')).toBeUndefined();
    expect(sedScriptProblem('v 4.2 e touch p', 'v2')).toBeUndefined();
  });

  it.each([
    's/a/b/', 's/a/b/g', 's/a/b/gI2p', 's,/,\\,,g', '1d', '$d', '/^#/d', '1!G;h;$!d', "/start/,/end/p", '',
    '#n\np', 'a hello w world', 'i\\\nw is text\n', 'c\\\nx', ':a;N;$!ba;s/\\n/ /g', 'y/abc/xyz/',
    '/a/I,/b/M{p;d}', 'l 20', 'q 5', '=', 'n;N;D;P;x;z;F', 's/w/e/', 'v 4.2', '/w/p', 's/x/\\n/;s/e/w/gp',
  ])('finds that %j only edits the stream', (script) => {
    expect(sedScriptProblem(script)).toBeUndefined();
    expect(sedScriptProblem(script, 'v2')).toBeUndefined();
  });
});
