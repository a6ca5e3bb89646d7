import { describe, expect, it } from 'vitest';
import { DEFAULT_RULES } from '../../../deterministic/policy/defaults';
import { parsePolicy, PolicyConfigError, policySchemas } from '../../../deterministic/policy/schema';

function errorOf(input: unknown): string {
  try {
    parsePolicy(input);
  } catch (err) {
    expect(err).toBeInstanceOf(PolicyConfigError);
    return (err as Error).message;
  }
  throw new Error('expected parsePolicy to throw');
}

describe('parsePolicy', () => {
  it('gives ask mode, no own rules and the defaults when the section is missing', () => {
    expect(parsePolicy(undefined)).toEqual({ mode: 'ask', rules: [], defaults: true });
  });

  it('accepts a full rule', () => {
    const rule = {
      id: 'no-etc',
      tool: 'write_file',
      decision: 'deny',
      when: {
        args: { path: '^/etc' }, risk: ['write'], command: ['x*'], commandPrefix: 'git status', anyArg: '^-f$', noArg: '^-i', redirect: '^/',
        outsideWorkspace: true, readOnly: true, host: ['api.github.com', '*.example.org'],
      },
      reason: 'system files',
    };
    expect(parsePolicy({ mode: 'strict', rules: [rule] }).rules).toEqual([rule]);
  });

  it.each([
    [{ mode: 'yolo' }, /^policy\.mode: /],
    [{ rules: [{ tool: 'x', decision: 'maybe' }] }, /^policy\.rules\.0\.decision: /],
    [{ rules: [{ decision: 'allow' }] }, /^policy\.rules\.0\.tool: /],
    [{ rules: [{ tool: 'x', decision: 'allow', when: { args: { path: '(' } } }] }, /^policy\.rules\.0\.when\.args\.path: not valid RE2 syntax/],
    [{ rules: [{ tool: 'x', decision: 'deny', when: { anyArg: '^of=/dev/(?!null$)' } }] }, /^policy\.rules\.0\.when\.anyArg: not valid RE2 syntax \(lookaround and backreferences are not supported\)$/],
    [{ rules: [{ tool: 'x', decision: 'deny', when: { redirect: '(a)\\1' } }] }, /^policy\.rules\.0\.when\.redirect: not valid RE2 syntax/],
    [{ rules: [{ tool: 'x', decision: 'allow', when: { host: [] } }] }, /^policy\.rules\.0\.when\.host: /],
    [{ rules: [{ tool: 'x', decision: 'allow', when: { readOnly: 'yes' } }] }, /^policy\.rules\.0\.when\.readOnly: /],
    [{ version: 4 }, /^policy\.version: /],
    [{ rules: [{ tool: 'x', decision: 'allow', when: { risk: ['harmless'] } }] }, /^policy\.rules\.0\.when\.risk\.0: /],
    [{ rules: [{ tool: 'x', decision: 'allow', when: { programs: ['ls'] } }] }, /^policy\.rules\.0\.when: .*"programs"/],
    [{ rules: [{ tool: 'x', decision: 'deny', because: 'no' }] }, /^policy\.rules\.0: .*"because"/],
    [{ mode: 'ask', extra: 1 }, /^policy: .*"extra"/],
  ])('rejects %j with a one-line error naming the field', (input, message) => {
    const error = errorOf(input);
    expect(error).toMatch(message);
    expect(error).not.toContain('\n');
  });

  it('accepts version 2, and leaves the version out when none is given', () => {
    expect(parsePolicy({ version: 2 })).toEqual({ version: 2, mode: 'ask', rules: [], defaults: true });
    expect(parsePolicy({})).not.toHaveProperty('version');
  });

  it('validates the default rule set against its own schema', () => {
    for (const rule of DEFAULT_RULES) expect(() => parsePolicy({ rules: [rule] }), rule.id).not.toThrow();
    expect(new Set(DEFAULT_RULES.map((r) => r.id)).size).toBe(DEFAULT_RULES.length);
  });

  it('produces plain JSON that survives a round trip through history', () => {
    const policy = policySchemas().policy.parse({ rules: [{ tool: '*', decision: 'ask', when: { risk: ['network'] } }] });
    expect(JSON.parse(JSON.stringify(policy))).toEqual(policy);
  });
});
