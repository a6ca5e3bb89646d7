import { describe, expect, it } from 'vitest';
import { READ_ONLY_PROGRAMS } from '../../../deterministic/policy/defaults';
import { codeArgsExact, knowsProgram, notReadOnlyExact } from '../../../deterministic/policy/programs';

const words = (line: string) => line.split(' ').filter(Boolean);
const check = (line: string, globs: string[] = []) => {
  const [program, ...args] = words(line);
  return notReadOnlyExact(program!, args, globs);
};

describe('the exact analysis of program command lines', () => {
  it('has a table for every program of the read-only list, and for no interpreter', () => {
    for (const program of READ_ONLY_PROGRAMS) expect(knowsProgram(program), program).toBe(true);
    for (const program of ['python3', 'node', 'perl', 'sh', 'bash', 'awk', 'env', 'xargs', 'tee', 'touch']) {
      expect(notReadOnlyExact(program, [])).toMatch(/does not know/);
    }
  });

  it.each([
    // Options missing from a table are not understood.
    ['ls --bogus', /`--bogus` of `ls` is not known/],
    ['ls -j', /`-j` of `ls` is not known/],
    ['cat --number=3', /`--number` of `cat` takes no value/],
    ['git log --show-signature', /`--show-signature` of `git log` is not known/],
    ['git log --ext-diff', /`--ext-diff` of `git log` is not known/],
    ['git diff --textconv', /not known/],
    ['git diff --output=x', /not known/],
    ['git log -C', /`-C` of `git log` is not known/],
    ['git push', /`git push` is not a git command the policy knows/],
    ['git -c a=b status', /`git -c` is not a git command/],
    // Options that write, run programs or read file names.
    ['sort -o out in', /`-o` writes a file/],
    ['sort --files0-from=list', /reads the names of the files/],
    ['wc --files0-from=list', /reads the names of the files/],
    ['du --files0-from list', /reads the names of the files/],
    ['md5sum -c sums', /reads the names of the files/],
    ['diff -l a b', /passes the output through `pr`/],
    ['diff --pag a b', /passes the output through `pr`/],
    ['uniq in out', /second file operand/],
    ['printf -v x y', /`-v` assigns a variable/],
    ['test -v x', /may evaluate an array subscript/],
    ['[ -R x ]', /may evaluate an array subscript/],
    ['tree --fromfile', /reads a listing/],
    ['find . -delete', /`-delete` deletes files/],
    ['find . -files0-from x', /reads the names of the paths/],
    ['find . -execdir ls ;', /`-execdir` runs a program/],
    ['find . -frobnicate', /find expression word `-frobnicate` is not known/],
    ['sed -n :x;w;out f', /the sed command `w` writes a file/],
  ])('finds that %j is not read-only', (line, reason) => {
    expect(check(line)).toMatch(reason);
  });

  it.each([
    'ls -la --color=never', 'ls -I *.o', 'head -5 a', 'head -n -3 a', 'tail -n +2 a', 'grep -3 x a', 'grep -rnw --include=*.ts x .',
    'cat -A a', 'sort -k2,2n -t: a', 'uniq -c a', 'cut -d, -f1 a', 'tr a-z A-Z', 'echo -n anything --goes', 'printf %s x', 'pwd -P',
    'stat -c %s a', 'du -sh .', 'diff -u a b', 'cmp -s a b', 'comm -12 a b', 'basename -s .ts a.ts', 'realpath --relative-to=. a',
    'nl -ba a', 'tac a', 'rev a', 'paste -sd, a', 'seq -1 5', 'md5sum a', 'which -a ls', 'true --anything', '[ -f a ]',
    'find . -name *.ts -type f -newer a -print', 'find -L . ( -name a -o -name b ) -prune', 'find . -newermt 2020-01-01',
    'sed -n 1,3p a', 'sed -E s/a+/b/g a', 'git status -sb', 'git diff --stat HEAD~1', 'git log --oneline -5 -- src', 'git show --stat HEAD',
  ])('finds that %j only reads', (line) => {
    expect(check(line)).toBeUndefined();
  });

  it('is unsure of a glob that may expand to an option name or another operand, where that matters', () => {
    expect(check('wc -l *.ts', ['*.ts'])).toMatch(/`\*\.ts` can expand to option names/);
    expect(check('wc -l src/*.ts', ['src/*.ts'])).toBeUndefined();
    expect(check('cat *', ['*'])).toBeUndefined();
    expect(check('uniq src/*', ['src/*'])).toMatch(/more operands/);
    expect(check('sed -n p src/*', ['src/*'])).toMatch(/more operands/);
    expect(check('find * -name x', ['*'])).toMatch(/can expand to option names/);
  });

  it('tells which arguments are patterns or scripts, never file names', () => {
    expect([...codeArgsExact('grep', words('-n /etc/passwd a.txt'))]).toEqual([1]);
    expect([...codeArgsExact('grep', words('-e /x -e /y a.txt'))]).toEqual([1, 3]);
    expect([...codeArgsExact('grep', words('-f pats /etc/x'))]).toEqual([]);
    expect([...codeArgsExact('sed', words('-n /a/,/b/p f'))]).toEqual([1]);
    expect([...codeArgsExact('find', words('. -path /etc/* -newer /etc/x'))]).toEqual([2]);
    expect([...codeArgsExact('cat', ['/a/'])]).toEqual([]);
  });
});
