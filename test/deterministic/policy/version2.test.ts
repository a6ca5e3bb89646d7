import { describe, expect, it } from 'vitest';
import { alwaysRuleFor } from '../../../deterministic/policy/always';
import { decide, freezePolicy } from '../../../deterministic/policy/decide';
import { DEFAULT_RULES, READ_ONLY_PROGRAMS } from '../../../deterministic/policy/defaults';
import { isOutsideWorkspace, urlHost, type PolicyCall } from '../../../deterministic/policy/match';
import { isRe2 } from '../../../deterministic/policy/patterns';
import { parsePolicy, type PolicyInput, type Rule } from '../../../deterministic/policy/schema';

const frozen = freezePolicy(parsePolicy(undefined));
const shellCall = (command: string): PolicyCall => ({ tool: 'run_shell', risk: 'dangerous', args: { command } });
const http = (url: string): PolicyCall => ({ tool: 'http_request', risk: 'network', args: { url } });
const shell = (command: string, session: Rule[] = [], policy = frozen) => decide(policy, shellCall(command), session);

describe('freezePolicy', () => {
  it('writes out the current default rules after the policy own rules, as version 3 without defaults', () => {
    const own: Rule = { id: 'allow-make', tool: 'run_shell', decision: 'allow', when: { command: ['make'] } };
    const policy = freezePolicy(parsePolicy({ mode: 'strict', rules: [own] }));
    expect(policy).toEqual({ version: 3, mode: 'strict', rules: [own, ...DEFAULT_RULES], defaults: false });
    expect(policy.rules[1]).not.toBe(DEFAULT_RULES[0]);
    expect(JSON.parse(JSON.stringify(policy))).toEqual(policy);
    expect(parsePolicy(policy)).toEqual(policy);
  });

  it('leaves out the defaults of a policy that turned them off, and changes nothing when frozen again', () => {
    const policy = freezePolicy(parsePolicy({ defaults: false, rules: [{ tool: 'x', decision: 'deny' }] }));
    expect(policy).toEqual({ version: 3, mode: 'ask', rules: [{ tool: 'x', decision: 'deny' }], defaults: false });
    expect(freezePolicy(frozen)).toEqual(frozen);
  });

  it('keeps a session on its frozen rules whatever the defaults become', () => {
    const session = freezePolicy(parsePolicy(undefined));
    const later = { ...session, rules: session.rules.filter((r) => r.id !== 'allow-git-status') };
    expect(decide(session, shellCall('git status')).decision).toBe('allow');
    expect(decide(later, shellCall('git status')).decision).toBe('ask');
  });
});

describe('the read-only list', () => {
  it('holds no interpreter', () => {
    for (const program of ['python3', 'python', 'node', 'perl', 'ruby', 'sh', 'bash', 'awk', 'gawk', 'php', 'lua']) {
      expect(READ_ONLY_PROGRAMS).not.toContain(program);
    }
  });
});

describe('RE2 patterns in version 2', () => {
  it('compiles every built-in pattern with RE2', () => {
    const patterns = DEFAULT_RULES.flatMap((r) => [r.when?.anyArg, r.when?.noArg, r.when?.redirect, ...Object.values(r.when?.args ?? {})]);
    for (const p of patterns.filter((x): x is string => x !== undefined)) expect(isRe2(p), p).toBe(true);
  });

  it('decides with a user pattern that backtracks catastrophically in JavaScript', () => {
    const policy = freezePolicy(parsePolicy({ rules: [{ id: 'evil', tool: 'run_shell', decision: 'deny', when: { anyArg: '^(a+)+$' } }] }));
    expect(decide(policy, shellCall(`echo ${'a'.repeat(5_000)}b`))).toMatchObject({ decision: 'allow' });
    expect(decide(policy, shellCall(`echo ${'a'.repeat(5_000)}`))).toMatchObject({ decision: 'deny', rule: 'evil' });
  });

  it('denies recursive deletion with abbreviated long options', () => {
    for (const c of ['rm --r x', 'rm --recurs x', 'rm --recursive x', 'rm --f x', 'rm --forc x', 'rm -Rv x', 'rm -vfi x']) {
      expect(shell(c), c).toMatchObject({ decision: 'deny', rule: 'deny-rm-recursive' });
    }
    expect(shell('rm -v x')).toMatchObject({ decision: 'ask' });
  });

  it('spells out the raw-device and device-write denials without lookahead', () => {
    for (const c of ['dd of=/dev/sda', 'dd of=/dev/', 'dd of=/dev/n', 'dd of=/dev/nul', 'dd of=/dev/nulls', 'dd of=/dev/nvme0']) {
      expect(shell(c), c).toMatchObject({ decision: 'deny', rule: 'deny-dd-device' });
    }
    expect(shell('dd if=a of=/dev/null')).toMatchObject({ decision: 'ask', rule: 'mode ask' });
    for (const c of ['echo > /dev/sda', 'echo > /dev/zero', 'echo > /dev/tcp/1.2.3.4/80']) {
      expect(shell(c), c).toMatchObject({ decision: 'deny', rule: 'deny-device-write' });
    }
    for (const c of ['ls > /dev/null', 'ls 2> /dev/stderr', 'ls > /dev/stdout', 'ls > /dev/fd/3']) expect(shell(c), c).toMatchObject({ decision: 'allow' });
  });

  it('does not show rules redirections to /dev/null-like sinks', () => {
    const policy = freezePolicy(parsePolicy({ rules: [{ id: 'no-redirects', tool: 'run_shell', decision: 'deny', when: { redirect: '.' } }] }));
    expect(decide(policy, shellCall('ls 2>/dev/null'))).toMatchObject({ decision: 'allow' });
    expect(decide(policy, shellCall('ls > x'))).toMatchObject({ decision: 'deny', rule: 'no-redirects' });
  });
});

describe('allow rules per host for http_request', () => {
  const rule = (host: string[]): PolicyInput => ({ version: 2, rules: [{ id: 'gh', tool: 'http_request', decision: 'allow', when: { host } }] });
  const decideHttp = (url: string, policy: PolicyInput) => decide(parsePolicy(policy), http(url));

  it('allows the named hosts, case-insensitively, with `*` wildcards, and asks for others', () => {
    expect(decideHttp('https://api.github.com/repos', rule(['api.github.com']))).toMatchObject({ decision: 'allow', rule: 'gh' });
    expect(decideHttp('https://API.GitHub.com:443/x?y#z', rule(['api.github.com']))).toMatchObject({ decision: 'allow' });
    expect(decideHttp('http://api.github.com', rule(['API.GITHUB.COM']))).toMatchObject({ decision: 'allow' });
    expect(decideHttp('https://docs.example.org/a', rule(['*.example.org']))).toMatchObject({ decision: 'allow' });
    expect(decideHttp('https://example.org/a', rule(['*.example.org']))).toMatchObject({ decision: 'ask' });
    expect(decideHttp('https://github.com/', rule(['api.github.com']))).toMatchObject({ decision: 'ask' });
    expect(decideHttp('https://api.github.com.evil.org/', rule(['api.github.com']))).toMatchObject({ decision: 'ask' });
  });

  it.each([
    'https://evil.org\\@api.github.com/', 'https://user@api.github.com/', 'https://api.github.com@evil.org/', 'https://api.github%2ecom/',
    'https://api.github.com\t/', ' https://api.github.com/', 'ftp://api.github.com/', 'https://0x7f.1/', 'https://2130706433/',
  ])('never allows %j through a host rule, since a URL parser could send it elsewhere', (url) => {
    expect(decideHttp(url, rule(['*']))).toMatchObject({ decision: 'ask' });
  });

  it('reads plain host names and dotted IPv4 addresses', () => {
    expect(urlHost('https://Api.GitHub.com./x')).toBe('api.github.com.');
    expect(urlHost('http://10.0.0.1:8080/')).toBe('10.0.0.1');
    expect(urlHost('http://[::1]:80/')).toBe('[::1]');
    expect(urlHost('http://010.0.0.1/')).toBeUndefined();
  });

  it('makes an `--always` approval allow that host only', () => {
    const always = alwaysRuleFor(http('https://api.github.com/repos/x'), frozen);
    expect(always).toEqual({
      id: 'always:http_request:api.github.com', tool: 'http_request', decision: 'allow', reason: 'approved with --always for this session',
      when: { host: ['api.github.com'] },
    });
    expect(alwaysRuleFor(http('https://api.github.com/repos/x'))).toEqual(always);
    expect(decide(frozen, http('https://api.github.com/other'), [always])).toMatchObject({ decision: 'allow', rule: always.id });
    expect(decide(frozen, http('https://evil.org/'), [always])).toMatchObject({ decision: 'ask' });
  });

  it('makes an `--always` approval of an unusual URL allow exactly that URL', () => {
    const always = alwaysRuleFor(http('https://u@x.org/a?b'), frozen);
    expect(always).toMatchObject({ id: 'always:http_request:exact', when: { args: { url: '^https:\\/\\/u@x\\.org\\/a\\?b$' } } });
    expect(decide(frozen, http('https://u@x.org/a?b'), [always])).toMatchObject({ decision: 'allow' });
    expect(decide(frozen, http('https://u@x.org/a?c'), [always])).toMatchObject({ decision: 'ask' });
  });
});

describe('skills mounted read-only at /skills', () => {
  const skillRule: Rule = { tool: 'run_shell', decision: 'allow', when: { commandPrefix: 'python3 /skills/word_count/count.py' } };
  const withConfigRule = freezePolicy(parsePolicy({ rules: [skillRule] }));

  it('counts reads of /skills as inside the workspace, and writes there as outside', () => {
    expect(isOutsideWorkspace('/skills/word_count/count.py', true)).toBe(false);
    expect(isOutsideWorkspace('/skills/word_count/count.py')).toBe(true);
    expect(isOutsideWorkspace('/skills/../etc/passwd', true)).toBe(true);
    expect(shell('cat /skills/word_count/SKILL.md')).toMatchObject({ decision: 'allow' });
    expect(shell('wc -l < /skills/word_count/SKILL.md')).toMatchObject({ decision: 'allow' });
    expect(shell('echo x > /skills/word_count/count.py')).toMatchObject({ decision: 'deny', rule: 'deny-outside-workspace' });
    expect(shell('cat a >> /skills/x')).toMatchObject({ decision: 'deny', rule: 'deny-outside-workspace' });
  });

  it('lets a skill rule cover its script, as a session rule or a config rule', () => {
    expect(shell('python3 /skills/word_count/count.py notes.txt', [skillRule])).toMatchObject({ decision: 'allow' });
    expect(decide(withConfigRule, shellCall('python3 /skills/word_count/count.py notes.txt'))).toMatchObject({ decision: 'allow' });
    expect(shell('python3 /skills/word_count/count.py notes.txt | sort', [skillRule])).toMatchObject({ decision: 'allow' });
  });

  it('does not cover the script with an expansion in an argument or an assignment', () => {
    for (const c of ['python3 /skills/word_count/count.py $F', 'python3 /skills/word_count/count.py "$(ls)"', 'python3 /skills/word_count/count.py {a,b}', 'PYTHONPATH=. python3 /skills/word_count/count.py a']) {
      expect(shell(c, [skillRule]), c).toMatchObject({ decision: 'ask' });
      expect(decide(withConfigRule, shellCall(c)), c).toMatchObject({ decision: 'ask' });
    }
  });

  it('still denies the script paths outside the workspace', () => {
    const c = 'python3 /skills/word_count/count.py ../../etc/passwd';
    expect(shell(c, [skillRule])).toMatchObject({ decision: 'deny', rule: 'deny-outside-workspace' });
    expect(decide(withConfigRule, shellCall(c))).toMatchObject({ decision: 'deny', rule: 'deny-outside-workspace' });
  });

  it('lets a policy without a version treat /skills as outside, as it always did', () => {
    expect(decide(parsePolicy(undefined), shellCall('cat /skills/word_count/SKILL.md'))).toMatchObject({ decision: 'deny' });
  });
});
