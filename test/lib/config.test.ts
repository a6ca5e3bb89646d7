import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveSessionConfig } from '../../lib/config';
import { UsageError, UserError } from '../../lib/errors';

function dirWith(config?: unknown): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-config-'));
  if (config !== undefined) writeFileSync(path.join(dir, 'harness.config.json'), JSON.stringify(config));
  return dir;
}

describe('resolveSessionConfig', () => {
  it('defaults to the ask policy with the default rules', () => {
    const c = resolveSessionConfig({ model: 'gpt-4o-mini' }, {}, dirWith());
    expect(c.policy).toMatchObject({ mode: 'ask', defaults: true });
    expect(c.limits.approvalTimeoutMs).toBe(3_600_000);
  });

  it('takes the policy mode from the flag over HARNESS_POLICY over the config file', () => {
    const dir = dirWith({ policy: { mode: 'strict' } });
    expect(resolveSessionConfig({ model: 'm' }, {}, dir).policy?.mode).toBe('strict');
    expect(resolveSessionConfig({ model: 'm' }, { HARNESS_POLICY: 'auto' }, dir).policy?.mode).toBe('auto');
    expect(resolveSessionConfig({ model: 'm', policy: 'ask' }, { HARNESS_POLICY: 'auto' }, dir).policy?.mode).toBe('ask');
  });

  it('keeps the config file rules when the mode comes from elsewhere', () => {
    const rules = [{ id: 'allow-make', tool: 'run_shell', decision: 'allow', when: { command: ['make'] } }];
    const c = resolveSessionConfig({ model: 'm', policy: 'auto' }, {}, dirWith({ policy: { rules } }));
    expect(c.policy?.rules).toEqual(rules);
  });

  it('rejects an unknown policy mode as a usage error', () => {
    expect(() => resolveSessionConfig({ model: 'm', policy: 'yolo' }, {}, dirWith())).toThrow(UsageError);
    expect(() => resolveSessionConfig({ model: 'm' }, { HARNESS_POLICY: 'yolo' }, dirWith())).toThrow(/strict, ask, auto/);
  });

  it('names the field of a bad policy rule in the config file', () => {
    const dir = dirWith({ policy: { rules: [{ tool: 'run_shell', decision: 'maybe' }] } });
    expect(() => resolveSessionConfig({ model: 'm' }, {}, dir)).toThrow(/policy\.rules\.0\.decision/);
  });

  it('converts limits given in seconds and refuses unknown fields', () => {
    const c = resolveSessionConfig({ model: 'm' }, {}, dirWith({ limits: { approvalTimeoutSec: 90, maxSteps: 7 } }));
    expect(c.limits.approvalTimeoutMs).toBe(90_000);
    expect(c.limits.maxSteps).toBe(7);
    expect(() => resolveSessionConfig({ model: 'm' }, {}, dirWith({ limits: { maxStep: 7 } }))).toThrow(/limits/);
  });

  it('says how to configure a model when none is given', () => {
    expect(() => resolveSessionConfig({}, {}, dirWith())).toThrow(UserError);
    expect(() => resolveSessionConfig({}, {}, dirWith())).toThrow(/no model configured/);
  });

  it('uses OPENAI_BASE_URL for the endpoint (DeepSeek by base URL alone)', () => {
    const c = resolveSessionConfig({ model: 'deepseek-chat' }, { OPENAI_BASE_URL: 'https://api.deepseek.com' }, dirWith());
    expect(c.model).toEqual({ provider: 'openai', model: 'deepseek-chat', baseUrl: 'https://api.deepseek.com' });
  });
});
