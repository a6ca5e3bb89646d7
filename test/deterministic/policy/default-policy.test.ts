import { describe, expect, it } from 'vitest';
import { decide, freezePolicy } from '../../../deterministic/policy/decide';
import { parsePolicy, type Policy } from '../../../deterministic/policy/schema';

/** The policy a session started today gets: the default policy, frozen. */
const frozen = freezePolicy(parsePolicy(undefined));
/** The same rules referenced instead of written out. */
const current = parsePolicy({ version: 3 });

function shell(command: string, policy: Policy = frozen) {
  return decide(policy, { tool: 'run_shell', risk: 'dangerous', args: { command } });
}

type Expected = 'allow' | 'ask' | `deny ${string}`;

// Every command with its decision under the default policy (mode ask, default rules).
const DEFAULT_POLICY_TABLE: [string, Expected][] = [
  // Holes closed by version 3 (the security review): each was allowed without asking.
  [`echo $'\\' ; python3 -c "print(1)" ; #\\''`, 'ask'],
  ['[[ x > victim.txt ]]', 'ask'],
  ["sed -n ':x w out.txt' f", 'ask'],
  ["sed -n 'v 4.2 e touch p' f", 'ask'],
  ['ls --hyperlink=always --bogus', 'ask'],
  ['diff -l a b', 'ask'],
  ['test -v "a[$(touch x)]"', 'ask'],
  ["test -v 'a[x]'", 'ask'],
  ['cat <<EOF\n$(touch x)\nEOF', 'ask'],
  ['cat <<< "$(touch x)"', 'ask'],
  ['ls {fd}>/dev/null', 'ask'],
  ['coproc ls', 'ask'],
  ['cd sub && ls', 'ask'],
  ['shopt -s expand_aliases; ls', 'ask'],
  [`echo $'\\x41'`, 'ask'],
  ['case $x in a) ls ;; esac', 'ask'],
  [`${'nice '.repeat(6_550)}ls`, 'ask'],
  [`${'env -u X '.repeat(3_600)}ls`, 'ask'],
  // …and what version 3 still allows.
  ["cat <<'EOF'\n$(not run)\nEOF", 'allow'],
  ['case a in a) ls ;; esac', 'allow'],
  ["echo $'plain'", 'allow'],
  ['ls -la | sort -k5 -n | head -3', 'allow'],
  // Holes closed by version 2: each was allowed without asking.
  [`python3 -c "import shutil; shutil.rmtree('.')"`, 'ask'],
  [`printf 'x' | python3`, 'ask'],
  [`sed '1e rm -rf .' a.txt`, 'ask'],
  [`sed 'w /tmp/x' a.txt`, 'ask'],
  ['sort -o out in', 'ask'],
  ['uniq in out', 'ask'],
  ['git diff --output=x', 'ask'],
  ['LD_PRELOAD=./x.so cat a', 'ask'],
  ['GIT_EXTERNAL_DIFF=./evil git diff', 'ask'],
  ['PATH=/workspace ls', 'ask'],
  ['cat {/etc/passwd,x}', 'ask'],
  ['cat ${PWD%/*}/etc/passwd', 'ask'],
  // Writing options of the read-only programs.
  ['sort -uo out in', 'ask'],
  ['sort --output=out in', 'ask'],
  ['sort --out out in', 'ask'],
  ['sort -T sub in', 'ask'],
  ['sort --compress-program=sh in', 'ask'],
  ['uniq -c in out', 'ask'],
  ['sed -i s/a/b/ f', 'ask'],
  ['sed --in-place=.bak s/a/b/ f', 'ask'],
  ['sed -n -s p a b', 'ask'],
  ['sed -f script.sed f', 'ask'],
  ["sed -n 's/a/b/w out' f", 'ask'],
  ["sed 's/a/date/e' f", 'ask'],
  ["sed 'r other' f", 'ask'],
  ["sed -e p -e 'W out' f", 'ask'],
  ['git log --ext-diff', 'ask'],
  ['git show --textconv HEAD', 'ask'],
  ['git diff --git-dir=.git', 'ask'],
  ['git log -C', 'ask'],
  ['git -c core.pager=less log', 'ask'],
  ['tree -o out.txt', 'ask'],
  ['tree -R', 'ask'],
  ['file -C -m magic', 'ask'],
  ['find . -exec cat {} +', 'ask'],
  ['find . -delete', 'ask'],
  ['find . -fprint out', 'ask'],
  // A glob that starts with a wildcard can expand to an option name (`--files0-from=x.ts`).
  ['wc -l *.ts', 'ask'],
  ['wc -l src/*.ts', 'allow'],
  // Interpreters run any code.
  ['python3 script.py', 'ask'],
  ['node -e "require(1)"', 'ask'],
  ["awk '{print}' f", 'ask'],
  ["sh -c 'ls'", 'ask'],
  // Assignments, functions and arithmetic change what later programs do.
  ['PATH=/workspace; ls', 'ask'],
  ['env X=1 ls', 'ask'],
  ['export PATH=/workspace; ls', 'ask'],
  ['printf -v PATH /workspace; ls', 'ask'],
  ['for PATH in /workspace; do ls; done', 'ask'],
  ['ls() { cat a; }; ls', 'ask'],
  ['((X=1)); ls', 'ask'],
  // Words only known at run time.
  ['echo $(ls)', 'ask'],
  ['echo $USER', 'ask'],
  ['echo $HOME', 'deny deny-outside-workspace'],
  ['echo "$(date)"', 'ask'],
  ['echo $((1+2))', 'ask'],
  ['cat .*/etc/passwd', 'ask'],
  ['ls .*', 'ask'],
  ['ls /workspace/*', 'ask'],
  ['for f in *.txt; do cat "$f"; done', 'ask'],
  // Programs from files anyone could have written, and globs that may expand to options.
  ['./cat a', 'ask'],
  ['sub/ls -la', 'ask'],
  ['/workspace/grep x a', 'ask'],
  ['sed -n p *', 'ask'],
  ['sort *.txt', 'ask'],
  ['uniq *.txt', 'ask'],
  ['find *', 'ask'],
  // Writes into the workspace ask, as any write does.
  ['echo hi > out.txt', 'ask'],
  ['cat a >> b', 'ask'],
  ['rm notes.txt', 'ask'],
  ['dd if=a of=/dev/null', 'ask'],
  ['npm install', 'ask'],
  // Denials.
  ['rm -rf /', 'deny deny-rm-recursive'],
  ['rm --rec build', 'deny deny-rm-recursive'],
  ['rm --force x', 'deny deny-rm-recursive'],
  ['sudo ls', 'deny deny-privilege'],
  ['curl http://x', 'deny deny-network-tools'],
  ['bash -c "rm -rf /"', 'deny deny-rm-recursive'],
  ['dd if=/dev/zero of=/dev/sda', 'deny deny-dd-device'],
  ['echo x > /dev/sda', 'deny deny-device-write'],
  ['echo x > /etc/passwd', 'deny deny-etc-write'],
  ['echo k >> ~/.ssh/authorized_keys', 'deny deny-ssh-write'],
  ['cat ../../etc/passwd', 'deny deny-outside-workspace'],
  ['cat < /etc/passwd', 'deny deny-outside-workspace'],
  ['ls ~', 'deny deny-outside-workspace'],
  ['cat /etc/*', 'deny deny-outside-workspace'],
  ['ls ../*', 'deny deny-outside-workspace'],
  ['grep -f/etc/shadow x', 'deny deny-outside-workspace'],
  ['echo x > /skills/word_count/count.py', 'deny deny-outside-workspace'],
  ['python3 /skills/word_count/count.py ../../etc/passwd', 'deny deny-outside-workspace'],
  // Read-only inspection stays allowed.
  ['ls -la', 'allow'],
  ['cat README.md | grep foo | wc -l', 'allow'],
  ["sed 's/a/b/' f", 'allow'],
  ["sed -n '1,5p' a.txt", 'allow'],
  ["sed -n '/start/,/end/p' f", 'allow'],
  ["sed '1!G;h;$!d' f", 'allow'],
  ["sed -E -e 's/(a|b)+/x/g' -e '/^#/d' f", 'allow'],
  ['git status', 'allow'],
  ['git diff HEAD~1..HEAD', 'allow'],
  ['git diff --text', 'allow'],
  ['git log --oneline -5', 'allow'],
  ['git show HEAD:README.md', 'allow'],
  ["find . -name '*.ts'", 'allow'],
  ['find src -type f -newer a.txt', 'allow'],
  ['head -n 5 a.txt', 'allow'],
  ['/usr/bin/cat a', 'allow'],
  ['cat *', 'allow'],
  ['ls src/*.js', 'allow'],
  ['grep -rn TODO src', 'allow'],
  ['sort a.txt | uniq -c', 'allow'],
  ['uniq -f 1 in', 'allow'],
  ['sort -k 2 -t, -u a.csv', 'allow'],
  ['diff a b', 'allow'],
  ['ls 2>/dev/null', 'allow'],
  ['cat a > /dev/null 2>&1', 'allow'],
  ['ls /workspace/src /tmp', 'allow'],
  ['cat /skills/word_count/SKILL.md', 'allow'],
  ['du -sh .', 'allow'],
  ['echo "a b"', 'allow'],
  ["printf '%s\\n' x", 'allow'],
  ['seq 1 10 | paste -sd+', 'allow'],
  ['test -f a && echo yes', 'allow'],
  ['[ -d src ] || echo no', 'allow'],
  ['tr a-z A-Z < a.txt', 'allow'],
  ['cut -d, -f1 a.csv', 'allow'],
  ['tree -L 2', 'allow'],
  ['file README.md', 'allow'],
  ['cat <<EOF\nhello\nEOF', 'allow'],
  ['diff <(sort a) <(sort b)', 'allow'],
];

describe('the default policy', () => {
  it('has a table of at least 60 commands', () => {
    expect(DEFAULT_POLICY_TABLE.length).toBeGreaterThanOrEqual(60);
  });

  it.each(DEFAULT_POLICY_TABLE)('decides %j: %s', (command, expected) => {
    const d = shell(command);
    const [decision, rule] = expected.split(' ');
    expect(d.decision).toBe(decision);
    if (rule) expect(d.rule).toBe(rule);
  });

  it('decides the same with the default rules referenced (version 3, defaults: true) as written out', () => {
    for (const [command] of DEFAULT_POLICY_TABLE) expect(shell(command, current), command).toEqual(shell(command));
  });

  it('says why a program that would be allowed is not', () => {
    expect(shell('sort -o out in').reason).toBe('no rule allows `sort` (`-o` writes a file); policy mode ask asks a human');
    expect(shell('PATH=/workspace; ls').reason).toMatch(/^no rule allows `ls` \(`PATH=\/workspace` assigns a variable, which changes what programs do\)/);
    expect(shell('echo $(ls)').reason).toMatch(/^no rule allows `echo` \(`\$\(ls\)` \(command substitution\) is only known at run time\)/);
    expect(shell("sed 'w /tmp/x' a.txt").reason).toContain('the sed command `w` writes a file');
  });

  it('falls to the mode for commands no rule may cover: auto allows, strict denies, denials still apply', () => {
    const auto = freezePolicy(parsePolicy({ mode: 'auto' }));
    const strict = freezePolicy(parsePolicy({ mode: 'strict' }));
    expect(shell('echo $(ls)', auto)).toMatchObject({ decision: 'allow', rule: 'mode auto' });
    expect(shell('echo $(ls)', strict)).toMatchObject({ decision: 'deny', rule: 'mode strict' });
    expect(shell('X=1 sudo id', auto)).toMatchObject({ decision: 'deny', rule: 'deny-privilege' });
    expect(shell('echo $(curl x)', auto)).toMatchObject({ decision: 'deny', rule: 'deny-network-tools' });
  });

  it('lets no allow rule cover a command with assignments or run-time words, not even one for the whole tool', () => {
    const everything = freezePolicy(parsePolicy({ rules: [{ id: 'all', tool: 'run_shell', decision: 'allow' }] }));
    expect(shell('npm test', everything)).toMatchObject({ decision: 'allow', rule: 'all' });
    expect(shell('X=1 npm test', everything)).toMatchObject({ decision: 'ask' });
    expect(shell('npm test $ARGS', everything)).toMatchObject({ decision: 'ask' });
    expect(shell('ls {a,b}', everything)).toMatchObject({ decision: 'ask' });
  });

  it('asks for a command that runs no program but assigns or uses a construct it does not model', () => {
    // `(( 1 )) > x` writes x though it runs no program; version 2 allowed such commands as nothing-to-run.
    expect(shell('X=1')).toMatchObject({ decision: 'ask', reason: expect.stringContaining('`X=1` assigns a variable') });
    expect(shell('(( 1 )) > x')).toMatchObject({ decision: 'ask', reason: expect.stringContaining('arithmetic command') });
    expect(shell('# only a comment')).toMatchObject({ decision: 'allow', rule: 'nothing-to-run' });
  });
});
