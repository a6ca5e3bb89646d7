import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { alwaysRuleFor } from '../../../deterministic/policy/always';
import { decide, effectiveRules, type Decision } from '../../../deterministic/policy/decide';
import { DEFAULT_RULES } from '../../../deterministic/policy/defaults';
import { LEGACY_RULES } from '../../../deterministic/policy/legacy';
import type { PolicyCall } from '../../../deterministic/policy/match';
import { parsePolicy, type Rule } from '../../../deterministic/policy/schema';

// Decisions of policies without a version, recorded with the code before policy versions
// existed (commit 06d1a95: the default-policy table, commands generated from vocabulary.ts,
// user rules, session rules), one call per line.
interface Fixture {
  policies: [string, unknown][];
  approvals: PolicyCall[];
  sessionRules: Rule[];
  calls: PolicyCall[];
  cases: [string, number, Decision][];
}
const fixture = JSON.parse(readFileSync(path.join(__dirname, 'fixtures', 'legacy-decisions.json'), 'utf8')) as Fixture;
const policies = new Map(fixture.policies.map(([name, input]) => [name, parsePolicy(input ?? undefined)]));

describe('policies without a version (sessions recorded before versions)', () => {
  it('decide every recorded call exactly as they were recorded', () => {
    const legacySession = fixture.approvals.map((call) => alwaysRuleFor(call, parsePolicy(undefined)));
    const changed = fixture.cases.filter(([name, i, recorded]) => {
      const session = name === 'default+session';
      const policy = policies.get(session ? 'default' : name)!;
      const now = decide(policy, fixture.calls[i]!, session ? legacySession : []);
      return JSON.stringify(now) !== JSON.stringify(recorded);
    });
    expect(changed).toEqual([]);
    expect(fixture.cases.length).toBeGreaterThan(800);
  });

  it('get the `--always` rules of that time, the whole tool for http_request', () => {
    expect(fixture.approvals.map((call) => alwaysRuleFor(call, parsePolicy(undefined)))).toEqual(fixture.sessionRules);
    expect(alwaysRuleFor({ tool: 'http_request', risk: 'network', args: { url: 'https://x.org/' } }, parsePolicy(undefined))).toEqual({
      id: 'always:http_request', tool: 'http_request', decision: 'allow', reason: 'approved with --always for this session',
    });
  });

  it('keep the legacy default rules, which still treat python3 as read-only', () => {
    const legacy = parsePolicy(undefined);
    expect(effectiveRules(legacy)).toEqual(LEGACY_RULES);
    expect(LEGACY_RULES).not.toEqual(DEFAULT_RULES);
    expect(decide(legacy, { tool: 'run_shell', risk: 'dangerous', args: { command: 'python3 x.py' } })).toMatchObject({ decision: 'allow', rule: 'allow-inspection' });
  });
});

/** Every string over the alphabet up to the given length. */
function* strings(alphabet: string[], max: number): Generator<string> {
  let level = [''];
  yield '';
  for (let n = 1; n <= max; n++) {
    const next: string[] = [];
    for (const s of level) for (const c of alphabet) next.push(s + c);
    yield* next;
    level = next;
  }
}

describe('the two legacy patterns rewritten without quadratic backtracking', () => {
  const rule = (id: string) => LEGACY_RULES.find((r) => r.id === id)!;

  it.each([
    ['deny-rm-recursive', '^-(-recursive|-force|[a-zA-Z]*[rRf][a-zA-Z]*)$', rule('deny-rm-recursive').when!.anyArg!, ['-', 'r', 'R', 'f', 'a', 'Z', '1', '\n']],
    ['allow-sed', '^(-[a-zA-Z]*i.*|--in-place(=.*)?)$', rule('allow-sed').when!.noArg!, ['-', 'i', 'a', 'Z', '=', '\n', '\r', '\u2028']],
  ])('%s matches exactly the strings the original pattern matched', (_id, original, rewritten, alphabet) => {
    const before = new RegExp(original);
    const after = new RegExp(rewritten);
    expect(rewritten).not.toBe(original);
    const differ: string[] = [];
    for (const s of strings(alphabet, 6)) if (before.test(s) !== after.test(s)) differ.push(s);
    for (const s of ['--recursive', '--force', '--recursive=x', '--in-place', '--in-place=.bak', '--in-placex', '-rf', '-fr', '-Rv', '-ni', '-in', '-i\r', 'x-r']) {
      if (before.test(s) !== after.test(s)) differ.push(s);
    }
    expect(differ).toEqual([]);
  });
});
