import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeCommand } from '../../../deterministic/policy/shell';
import { globMayLeave } from '../../../deterministic/policy/shell-words';
import { type SimpleCommand } from '../../../deterministic/policy/types';

function programs(command: string): string[] {
  return analyzeCommand(command).commands.map((c) => c.program);
}

function find(command: string, program: string): SimpleCommand | undefined {
  return analyzeCommand(command).commands.find((c) => c.program === program);
}

describe('analyzeCommand', () => {
  it.each([
    ['cat a | grep x | wc -l', ['cat', 'grep', 'wc']],
    ['ls; sudo id', ['ls', 'sudo', 'id']],
    ['make && curl x || wget y', ['make', 'curl', 'wget']],
    ['(cd a; sudo x) & { rm b; }', ['cd', 'sudo', 'x', 'rm']],
    ['echo $(curl x)', ['echo', 'curl']],
    ['echo "a $(sudo b) c"', ['echo', 'sudo', 'b']],
    ['echo `echo \\`sudo x\\``', ['echo', 'echo', 'sudo', 'x']],
    ['cat <(nc host 1) >(tee y)', ['cat', 'nc', 'tee']],
    ['cat <<EOF\n$(sudo id)\nEOF', ['cat', 'sudo', 'id']],
    ['A=1 B=$(nc h) ls', ['ls', 'nc']],
    ['if true; then sudo a; fi; for i in 1; do wget x; done', ['true', 'sudo', 'a', 'wget']],
    ['f() { sudo x; }', ['sudo', 'x']],
  ])('finds every program in %j', (command, expected) => {
    const result = analyzeCommand(command);
    expect(result.ok).toBe(true);
    expect(result.commands.map((c) => c.program)).toEqual(expected);
  });

  it.each([
    ['bash -c "rm -rf /"', ['bash', 'rm']],
    ["sh -c 'ls | sudo tee x'", ['sh', 'ls', 'sudo', 'tee']],
    ['dash -ec "curl x"', ['dash', 'curl']],
    ['bash -lc "sh -c \\"wget z\\""', ['bash', 'sh', 'wget']],
    ['eval "sudo id"', ['eval', 'sudo', 'id']],
    ["trap 'curl x' EXIT", ['trap', 'curl']],
    ['env -S "sudo id"', ['env', 'sudo', 'id']],
  ])('parses the shell code inside %j', (command, expected) => {
    expect(programs(command)).toEqual(expected);
  });

  it.each([
    ['env A=1 sudo id', ['env', 'sudo', 'id']],
    ['env -i -u HOME X=1 curl x', ['env', 'curl']],
    ['xargs -n 1 -I{} rm -rf', ['xargs', 'rm']],
    ['nice -n 5 nohup timeout -s KILL 5 wget x', ['nice', 'nohup', 'timeout', 'wget']],
    ['exec sudo id', ['exec', 'sudo', 'id']],
    ['command sudo id', ['command', 'sudo', 'id']],
    ['sudo -u root env X=1 ls', ['sudo', 'env', 'ls']],
    ['/usr/bin/sudo ls', ['sudo', 'ls']],
    ['\\sudo ls', ['sudo', 'ls']],
    ['find . -name x -exec rm -rf {} + -execdir cat {} \\;', ['find', 'rm', 'cat']],
    ['watch -n 1 "ls -la"', ['watch', 'ls']],
  ])('records the wrapper and the program it runs in %j', (command, expected) => {
    expect(programs(command)).toEqual(expected);
  });

  it('says which wrapper launched a program', () => {
    expect(find('find . -exec rm -rf {} +', 'rm')).toMatchObject({ args: ['-rf', '{}'], via: 'find -exec' });
    expect(find('bash -c "rm -rf /"', 'rm')).toMatchObject({ text: 'rm -rf /', via: 'bash -c' });
    expect(find('timeout 5 wget x', 'wget')).toMatchObject({ args: ['x'], via: 'timeout' });
  });

  it('does not treat `command -v` as running the program', () => {
    expect(programs('command -v sudo')).toEqual(['command']);
  });

  it('records redirection targets, including those of an enclosing group', () => {
    expect(find('cat x > /etc/passwd 2>&1', 'cat')).toMatchObject({ redirects: ['/etc/passwd'], reads: [] });
    expect(find('echo k >> ~/.ssh/authorized_keys', 'echo')?.redirects).toEqual(['~/.ssh/authorized_keys']);
    expect(find('wc -l < in.txt &> out.txt', 'wc')).toMatchObject({ redirects: ['out.txt'], reads: ['in.txt'] });
    expect(find('( ls ) > /etc/x', 'ls')?.redirects).toEqual(['/etc/x']);
    expect(analyzeCommand('> /etc/x').commands).toEqual([
      { program: '', args: [], text: '> /etc/x', redirects: ['/etc/x'], reads: [] },
    ]);
  });

  it('keeps quoted arguments as the program receives them', () => {
    expect(find(`grep -e "a b" 'c d' e\\ f`, 'grep')?.args).toEqual(['-e', 'a b', 'c d', 'e f']);
  });

  it.each([
    ['echo "unterminated', /unterminated double quote/],
    ['echo $(ls', /unterminated command substitution/],
    ['if true', /expected 'then'/],
    ['bash -c "echo \'x"', /unterminated single quote.*bash -c/],
  ])('reports %j as unparsable with the parser reason', (command, reason) => {
    const result = analyzeCommand(command);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });

  it.each([
    ['$(echo rm) -rf /', /program `\$\(echo rm\)` is only known at run time/],
    ['bash -c "$CMD"', /`bash -c` runs shell code only known at run time/],
    ['bash script.sh', /script file/],
    ['curl x | bash', /no -c string/],
    ['source ./env.sh', /script file/],
    ['echo hi > "$OUT"', /redirection target/],
  ])('reports %j as not analysable, since what runs is only known at run time', (command, reason) => {
    const result = analyzeCommand(command);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });

  it('still lists what it found in a command it cannot fully analyse', () => {
    const result = analyzeCommand('`wget x`');
    expect(result.ok).toBe(false);
    expect(result.commands.map((c) => c.program)).toContain('wget');
  });

  it('stops at absurd nesting instead of recursing forever', () => {
    let command = 'sudo id';
    for (let i = 0; i < 12; i++) command = `sh -c ${JSON.stringify(command)}`;
    const result = analyzeCommand(command);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(/nested too deeply/);
  });
});

describe('what changes how later programs run', () => {
  it.each([
    ['X=1 ls', /`X=1` assigns a variable/],
    ['PATH=/workspace; ls', /`PATH=\/workspace` assigns a variable/],
    ['ls; LD_PRELOAD=x', /`LD_PRELOAD=x` assigns a variable/],
    ['env A=1 ls', /`A=1` \(env\) assigns a variable/],
    ['sudo -u x B=2 ls', /`B=2` \(sudo\) assigns a variable/],
    ['env -S "C=3 ls"', /`C=3` assigns a variable/],
    ['for PATH in /x; do ls; done', /`for PATH in …` assigns a variable/],
    ['select X in a; do ls; done', /`select X in …` assigns a variable/],
    ['((X=1)); ls', /arithmetic command/],
    ['for ((i=0; i<2; i++)); do ls; done', /arithmetic command/],
    ['ls() { cat a; }; ls', /`ls\(\) \{…\}` defines a function/],
  ])('lists %j', (command, setting) => {
    const result = analyzeCommand(command);
    expect(result.settings.join('; ')).toMatch(setting);
  });

  it.each(['ls -la', 'make CC=gcc', 'dd if=a of=b', 'cat a | grep b=c', 'echo X=1'])('lists nothing for %j', (command) => {
    expect(analyzeCommand(command).settings).toEqual([]);
  });
});

describe('words only known at run time', () => {
  it.each([
    ['cat $X', 'parameter expansion'],
    ['cat "${X:-a}"', 'parameter expansion'],
    ['cat ${PWD%/*}/etc/passwd', 'parameter expansion'],
    ['echo $(ls)', 'command substitution'],
    ['echo "a `ls` b"', 'command substitution'],
    ['echo $((1+2))', 'arithmetic expansion'],
    ['cat {/etc/passwd,x}', 'brace expansion'],
    ['ls @(a|b)', 'extended glob'],
    ['cat .*/etc/passwd', 'a glob that can match outside the workspace'],
    ['cat /etc/*', 'a glob that can match outside the workspace'],
    ['cat ../*', 'a glob that can match outside the workspace'],
    ['ls src/.*', 'a glob that can match outside the workspace'],
  ])('marks %j', (command, kind) => {
    const [first] = analyzeCommand(command).commands;
    expect(first?.unknown?.[0]).toContain(`(${kind})`);
  });

  it.each(['ls *.ts', 'ls src/*.js sub/?', "cat 'a b' \"c\" $'d'", 'diff <(sort a) b', 'find . -name "*.ts"', 'ls .hidden/*'])(
    'marks nothing in %j',
    (command) => {
      expect(analyzeCommand(command).commands.every((c) => c.unknown === undefined)).toBe(true);
    },
  );

  it('marks a program run from a file outside the system folders', () => {
    expect(find('./cat a', 'cat')?.unknown).toEqual(['`./cat` (a program file outside /bin and /usr/bin)']);
    expect(find('/workspace/bin/ls', 'ls')?.unknown?.[0]).toContain('outside /bin and /usr/bin');
    expect(find('/usr/bin/../../workspace/ls', 'ls')?.unknown?.[0]).toContain('outside /bin and /usr/bin');
    expect(find('/usr/bin/cat a', 'cat')?.unknown).toBeUndefined();
    expect(find('/bin/ls', 'ls')?.unknown).toBeUndefined();
  });

  it('lists the glob arguments, safe or not', () => {
    expect(find('sort *.txt b', 'sort')?.globs).toEqual(['*.txt']);
    expect(find("sort '*.txt'", 'sort')?.globs).toBeUndefined();
  });

  it('marks the words of a program run by a wrapper', () => {
    expect(find('timeout 5 cat $X', 'cat')?.unknown).toEqual(['`$X` (parameter expansion)']);
  });
});

describe('process substitutions joined to other text', () => {
  // The parser ends a word at `)`; bash does not: the `#` after it is text, not a comment, and
  // the second substitution runs (found by the differential fuzzer, 20,000 commands).
  it.each(['diff <(ls)#<(touch x)', 'cat <(ls)x', 'cat x<(ls)', 'sh -c "cat <(ls)#<(touch x)"'])('asks about %j, naming the construct', (command) => {
    expect(analyzeCommand(command).unmodelled.join('\n')).toMatch(/a process substitution joined to other text in one word/);
  });

  it.each(['diff <(ls) <(sort a)', 'cat <(ls)', 'cat <(ls)>out', 'cat <(ls);ls', 'wc -l <(ls)|cat', 'echo $(cat <(ls))'])('leaves %j as it was', (command) => {
    expect(analyzeCommand(command).unmodelled.join('\n')).not.toMatch(/process substitution joined/);
  });
});

describe('globMayLeave', () => {
  it.each([
    ['*.ts', false], ['src/*', false], ['./*', false], ['.hidden/*', false], ['[.]*', false], ['*/..', true],
    ['.*', true], ['src/.*', true], ['.[a-z]*', true], ['/workspace/*', true], ['../*', true], ['~/*', true],
  ])('says whether %j can match outside the workspace (%s)', (pattern, leaves) => {
    expect(globMayLeave(pattern)).toBe(leaves);
  });
});

describe('pathological input', () => {
  it.each([
    ['nested command substitutions', `echo ${'$('.repeat(10_000)}x${')'.repeat(10_000)}`],
    ['nested quoted substitutions', `echo ${'"$('.repeat(8_000)}x${')"'.repeat(8_000)}`],
    ['nested process substitutions', `cat ${'<('.repeat(16_000)}`],
    ['nested backticks', '`echo '.repeat(5_000)],
  ])('reports %s as too deep to analyse instead of overflowing the stack', (_name, command) => {
    const result = analyzeCommand(command);
    expect(result.ok).toBe(false);
  });

  it('analyses thousands of pipes and lists completely', () => {
    const result = analyzeCommand(`ls${' | cat'.repeat(5_000)}; ${'ls && '.repeat(3_000)}ls`);
    expect(result.ok).toBe(true);
    expect(result.commands).toHaveLength(1 + 5_000 + 3_001);
  });
});

describe('module structure', () => {
  it('shares its types through types.ts, so the walk and wrappers.ts do not import each other', () => {
    const source = (name: string) => readFileSync(path.join(__dirname, '../../../deterministic/policy', name), 'utf8');
    expect(source('wrappers.ts')).not.toMatch(/from '\.\/shell/);
    expect(source('shell-argv.ts')).toMatch(/from '\.\/wrappers'/);
  });
});
