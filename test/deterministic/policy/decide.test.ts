// Policies without a version: the semantics sessions recorded before policy versions replay
// with. Version 2 (what a session started today keeps) is in default-policy.test.ts and
// version2.test.ts.
import { describe, expect, it } from 'vitest';
import { alwaysRuleFor } from '../../../deterministic/policy/always';
import { decide } from '../../../deterministic/policy/decide';
import { isOutsideWorkspace } from '../../../deterministic/policy/match';
import { parsePolicy, type PolicyInput, type Rule } from '../../../deterministic/policy/schema';
import type { Risk } from '../../../deterministic/types';

const askPolicy = parsePolicy(undefined);

function shell(command: string, policy: PolicyInput = {}, session: Rule[] = []) {
  return decide(parsePolicy(policy), { tool: 'run_shell', risk: 'dangerous', args: { command } }, session);
}

function tool(name: string, risk: Risk, args: Record<string, unknown>, policy: PolicyInput = {}) {
  return decide(parsePolicy(policy), { tool: name, risk, args });
}

describe('decide under the default policy without a version', () => {
  it.each([
    ['rm -rf /', 'rm', 'deny-rm-recursive'],
    ['sudo ls', 'sudo', 'deny-privilege'],
    ['curl http://x', 'curl', 'deny-network-tools'],
    ['echo $(curl x)', 'curl', 'deny-network-tools'],
    ['`wget x`', 'wget', 'deny-network-tools'],
    ['bash -c "rm -rf /"', 'rm', 'deny-rm-recursive'],
    ['ls; sudo id', 'sudo', 'deny-privilege'],
    ['env A=1 sudo id', 'sudo', 'deny-privilege'],
    ['find . -exec rm -rf {} +', 'rm', 'deny-rm-recursive'],
    ['cat x > /etc/passwd', 'cat', 'deny-etc-write'],
    ['echo k >> ~/.ssh/authorized_keys', 'echo', 'deny-ssh-write'],
    ['dd if=/dev/zero of=/dev/sda', 'dd', 'deny-dd-device'],
    ['xargs rm -rf', 'rm', 'deny-rm-recursive'],
    ['timeout 5 wget x', 'wget', 'deny-network-tools'],
    ['chmod 777 a', 'chmod', 'deny-chmod-777'],
    ['mkfs.ext4 /dev/sdb', 'mkfs.ext4', 'deny-mkfs'],
    ['shutdown -h now', 'shutdown', 'deny-power'],
    ['echo x > /dev/sda', 'echo', 'deny-device-write'],
    ['cat ../../etc/passwd', 'cat', 'deny-outside-workspace'],
    ['ls /etc', 'ls', 'deny-outside-workspace'],
    ['sudo ls "unterminated', 'sudo', 'deny-privilege'],
  ])('denies %j, naming the program', (command, program, rule) => {
    const d = shell(command);
    expect(d).toMatchObject({ decision: 'deny', rule });
    expect(d.reason).toContain(`\`${program}\``);
    expect(d.reason).toContain(`rule ${rule}`);
  });

  it('explains a denial as the model will read it', () => {
    expect(shell('ls; sudo id').reason).toBe('`sudo` is denied by rule deny-privilege (runs commands as another user)');
    expect(shell('find . -exec rm -rf {} +').reason).toMatch(/^`rm` \(run by find -exec\) is denied by rule deny-rm-recursive/);
    expect(shell('cat x > /etc/passwd').reason).toMatch(/^`cat` writes to `\/etc\/passwd`: denied by rule deny-etc-write/);
  });

  it.each(['ls -la', 'cat README.md | grep x | wc -l', 'git status', 'python3 script.py', 'find . -name "*.ts"',
    "sed -n '1,5p' a.txt", 'git diff HEAD~1..HEAD', 'ls 2>/dev/null', 'cat a > /dev/null 2>&1', 'ls /workspace/src /tmp'])(
    'allows the read-only inspection %j',
    (command) => {
      expect(shell(command)).toMatchObject({ decision: 'allow' });
    },
  );

  it.each(['npm install', 'rm notes.txt', 'find . -delete', 'find . -exec cat {} +', 'sed -i s/a/b/ x', 'git push',
    'echo hi > notes.txt', 'ls | npm test'])('asks for %j, which no rule allows', (command) => {
    expect(shell(command)).toMatchObject({ decision: 'ask', rule: 'mode ask' });
  });

  it('names what is not allowed and lists every program', () => {
    expect(shell('ls && npm install')).toEqual({
      decision: 'ask',
      rule: 'mode ask',
      reason: 'no rule allows `npm`; policy mode ask asks a human',
      programs: ['ls', 'npm'],
    });
  });

  it('asks for an unparsable command, and denies it in strict mode', () => {
    expect(shell('echo "unterminated')).toMatchObject({ decision: 'ask', rule: 'unparsable' });
    expect(shell('echo "unterminated').reason).toMatch(/cannot be analysed: unterminated double quote/);
    expect(shell('echo "unterminated', { mode: 'auto' })).toMatchObject({ decision: 'ask' });
    expect(shell('echo "unterminated', { mode: 'strict' })).toMatchObject({ decision: 'deny', rule: 'mode strict' });
  });

  it('asks when the program is only known at run time, even in auto mode', () => {
    expect(shell('$(echo rm) -rf build', { mode: 'auto' })).toMatchObject({ decision: 'ask' });
    expect(shell('echo "sudo id" | bash', { mode: 'auto' })).toMatchObject({ decision: 'ask' });
  });

  it('allows what no rule denies in auto mode, but still denies', () => {
    expect(shell('npm install', { mode: 'auto' })).toMatchObject({ decision: 'allow', rule: 'mode auto' });
    expect(shell('sudo id', { mode: 'auto' })).toMatchObject({ decision: 'deny', rule: 'deny-privilege' });
  });

  it('denies what no rule allows in strict mode, and still allows what a rule does', () => {
    expect(shell('npm install', { mode: 'strict' })).toMatchObject({ decision: 'deny', rule: 'mode strict' });
    expect(shell('git status', { mode: 'strict' })).toMatchObject({ decision: 'allow', rule: 'allow-git-status' });
  });
});

describe('decide for tools other than run_shell', () => {
  it('denies paths escaping the workspace', () => {
    const d = tool('write_file', 'write', { path: '../x', content: '' });
    expect(d).toMatchObject({ decision: 'deny', rule: 'deny-outside-workspace' });
    expect(d.reason).toBe('`../x` is outside the workspace: denied by rule deny-outside-workspace (paths must stay inside the workspace)');
    expect(tool('read_file', 'read_only', { path: '/etc/passwd' })).toMatchObject({ decision: 'deny' });
    expect(tool('read_file', 'read_only', { path: '../../etc/passwd' })).toMatchObject({ decision: 'deny' });
  });

  it('asks before writing inside the workspace in ask mode', () => {
    expect(tool('write_file', 'write', { path: 'notes.txt', content: 'x' })).toMatchObject({ decision: 'ask', rule: 'mode ask' });
  });

  it('allows read-only tools', () => {
    expect(tool('read_file', 'read_only', { path: 'notes.txt' })).toMatchObject({ decision: 'allow', rule: 'allow-read-only-tools' });
    expect(tool('finish', 'read_only', { answer: 'done' })).toMatchObject({ decision: 'allow' });
    expect(decide(askPolicy, { tool: 'list_files', risk: 'read_only', args: {} })).toMatchObject({ decision: 'allow' });
  });

  it('asks before network access', () => {
    expect(tool('http_request', 'network', { url: 'http://x' })).toMatchObject({ decision: 'ask', reason: expect.stringContaining('`http_request`') });
  });
});

describe('config rules', () => {
  it('lets a deny rule on tool arguments win over the defaults that would allow', () => {
    const policy: PolicyInput = { rules: [{ id: 'no-secrets', tool: 'read_file', decision: 'deny', when: { args: { path: 'secret' } } }] };
    expect(tool('read_file', 'read_only', { path: 'secret.txt' }, policy)).toMatchObject({ decision: 'deny', rule: 'no-secrets' });
    expect(tool('read_file', 'read_only', { path: 'public.txt' }, policy)).toMatchObject({ decision: 'allow' });
  });

  it('lets an ask rule make auto mode ask', () => {
    const policy: PolicyInput = { mode: 'auto', rules: [{ id: 'ask-push', tool: 'run_shell', decision: 'ask', when: { commandPrefix: 'git push' } }] };
    expect(shell('git push origin', policy)).toMatchObject({ decision: 'ask', rule: 'ask-push' });
    expect(shell('git pull', policy)).toMatchObject({ decision: 'allow' });
  });

  it('allows writing redirections only with a redirect pattern', () => {
    const policy: PolicyInput = { rules: [{ tool: 'run_shell', decision: 'allow', when: { command: ['echo'], redirect: '^out/' } }] };
    expect(shell('echo hi > out/a.txt', policy)).toMatchObject({ decision: 'allow', rule: 'rules[0]' });
    expect(shell('echo hi > notes.txt', policy)).toMatchObject({ decision: 'ask' });
  });

  it('drops the default rules with defaults: false', () => {
    expect(shell('curl x', { defaults: false, mode: 'auto' })).toMatchObject({ decision: 'allow' });
  });
});

describe('alwaysRuleFor', () => {
  const call = (command: string) => ({ tool: 'run_shell', risk: 'dangerous' as const, args: { command } });

  it('builds a session rule from the program and its first non-flag argument', () => {
    expect(alwaysRuleFor(call('git commit -m x'))).toMatchObject({ tool: 'run_shell', decision: 'allow', when: { commandPrefix: 'git commit' } });
    expect(alwaysRuleFor(call('ls -la'))).toMatchObject({ when: { commandPrefix: 'ls' } });
    expect(alwaysRuleFor({ tool: 'write_file', risk: 'write', args: { path: 'a' } })).toEqual({
      id: 'always:write_file',
      tool: 'write_file',
      decision: 'allow',
      reason: 'approved with --always for this session',
    });
  });

  it('allows the same prefix again in that session, and nothing else', () => {
    const session = [alwaysRuleFor(call('git commit -m x'))];
    expect(shell('git commit -m y', {}, session)).toMatchObject({ decision: 'allow', rule: 'always:run_shell:git commit' });
    expect(shell('git commit -m y && git status', {}, session)).toMatchObject({ decision: 'allow' });
    expect(shell('git push', {}, session)).toMatchObject({ decision: 'ask' });
    expect(shell('git commit -m y; sudo id', {}, session)).toMatchObject({ decision: 'deny' });
    expect(shell('git commit -m y')).toMatchObject({ decision: 'ask' });
  });

  it('lets a session rule for a tool allow it without overriding denials', () => {
    const session = [alwaysRuleFor({ tool: 'write_file', risk: 'write', args: { path: 'a' } })];
    const policy = parsePolicy({});
    expect(decide(policy, { tool: 'write_file', risk: 'write', args: { path: 'b.txt' } }, session)).toMatchObject({ decision: 'allow' });
    expect(decide(policy, { tool: 'write_file', risk: 'write', args: { path: '../b' } }, session)).toMatchObject({ decision: 'deny' });
  });
});

describe('isOutsideWorkspace', () => {
  it.each([
    ['notes.txt', false], ['a/../b', false], ['/workspace/x', false], ['/tmp/x', false], ['/dev/null', false],
    ['../x', true], ['a/../../x', true], ['/etc/passwd', true], ['/workspace/../etc', true], ['/workspacex', true],
    ['~/.ssh/id_rsa', true], ['/dev/sda', true],
  ])('resolves %j (outside: %s)', (path, outside) => {
    expect(isOutsideWorkspace(path)).toBe(outside);
  });
});
